"""bench/perf/profile.py on a real CPU profile: a small Go program whose packages are named as the
scheduler's and a plugin's are, profiled by Go's own profiler, read back by the real `go tool pprof`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.perf import profile as cpu

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

GO_MOD = "module k8s.io/kubernetes\n\ngo 1.22\n"
# The scheduler's cycle calls the plugin's Filter and Score (map lookups, the hot part); idle() burns CPU
# outside any scheduling frame, so scheduling CPU is a part of the process.
SCHEDULER = """package scheduler

import "k8s.io/kubernetes/plugin/hot"

type Scheduler struct{ Plugin *hot.Hot }

//go:noinline
func (s *Scheduler) ScheduleOne(n int) int {
	total := 0
	for i := 0; i < n; i++ {
		total += s.Plugin.Filter(i) + s.Plugin.Score(i)
	}
	return total
}
"""
PLUGIN = """package hot

import "strconv"

type Hot struct{ Labels map[string]string }

//go:noinline
func (h *Hot) Filter(i int) int {
	if h.Labels["key-"+strconv.Itoa(i%64)] == "true" {
		return 1
	}
	return 0
}

//go:noinline
func (h *Hot) Score(i int) int {
	return len(h.Labels["key-"+strconv.Itoa(i%32)])
}
"""
MAIN = """package main

import (
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/plugin/hot"
)

//go:noinline
func idle(n int) int {
	x := 1
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	labels := map[string]string{}
	for i := 0; i < 64; i += 2 {
		labels["key-"+strconv.Itoa(i)] = "true"
	}
	s := &scheduler.Scheduler{Plugin: &hot.Hot{Labels: labels}}
	sink := 0
	for start := time.Now(); time.Since(start) < 1500*time.Millisecond; {
		sink += s.ScheduleOne(20000) + idle(2000000)
	}
	pprof.StopCPUProfile()
	f.Close()
	if sink == 42 {
		println()
	}
}
"""


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("prog")
    for rel, text in {"go.mod": GO_MOD, "pkg/scheduler/scheduler.go": SCHEDULER, "plugin/hot/hot.go": PLUGIN,
                      "cmd/prog/main.go": MAIN}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=mod", GOPROXY="off", GOWORK="off")
    subprocess.run(["go", "build", "-o", str(src / "prog"), "./cmd/prog"], cwd=src, env=env, check=True, timeout=600)
    out = src / "cpu.pprof"
    subprocess.run([str(src / "prog"), str(out)], check=True, timeout=120)
    return out


def test_the_plugin_gets_its_share_split_by_point_with_its_leaves(profiled):
    shares = cpu.summary(cpu.attribute(cpu.traces(profiled), {"Hot": "k8s.io/kubernetes/plugin/hot",
                                                               "Absent": "example.com/absent/pkg/absent"}))
    hot = shares["plugins"]["Hot"]
    assert hot["percent"] > 30, shares  # nearly all of ScheduleOne's work is in the plugin
    assert set(hot["points"]) == {"Filter", "Score"}, hot
    assert sum(p["percent"] for p in hot["points"].values()) == pytest.approx(hot["percent"], abs=0.1)
    leaves = {leaf for p in hot["points"].values() for leaf in p["leaves"]}
    assert leaves & {"map lookups", "allocation", "strconv.Itoa"}, leaves
    # idle() is outside any scheduling frame: scheduling CPU is a part of the process, not all of it
    assert 5 < shares["scheduling_percent_of_process"] < 95, shares
    assert shares["framework_percent"] == pytest.approx(100 - hot["percent"], abs=0.1)
    # negative control: a package the program never runs gets nothing
    assert shares["plugins"]["Absent"] == {"percent": 0.0, "points": {}}
    text = cpu.line("W", "spec", dict(shares, file="cpu.pprof"))
    assert "Hot " in text and "Filter" in text and "Absent 0.0% of scheduling CPU" in text


def test_merge_and_svg(profiled, tmp_path):
    merged = cpu.merge([profiled, profiled], tmp_path / "merged.pprof")
    twice = cpu.summary(cpu.attribute(cpu.traces(merged), {}))
    once = cpu.summary(cpu.attribute(cpu.traces(profiled), {}))
    assert twice["total_s"] == pytest.approx(2 * once["total_s"], rel=0.02)
    if shutil.which("dot"):
        picture = cpu.svg(profiled, tmp_path / "cpu.svg", cpu.focus_regexp())
        assert picture is not None and b"<svg" in picture.read_bytes()[:2000]


def test_parse_traces_reads_units_and_frames():
    text = ("File: x\nType: cpu\n-----------+-------------------------------------------------------\n"
            "      10ms   runtime.mapaccess1_faststr\n             a.(*P).Filter\n"
            "-----------+-------------------------------------------------------\n"
            "     1.50s   main.idle\n             main.main\n"
            "-----------+-------------------------------------------------------\n")
    stacks = cpu.parse_traces(text)
    assert [(s.nanos, s.frames) for s in stacks] == [(1e7, ["runtime.mapaccess1_faststr", "a.(*P).Filter"]),
                                                     (1.5e9, ["main.idle", "main.main"])]


def test_merge_failure_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.pprof"
    bad.write_text("not a profile")
    with pytest.raises(Exception) as caught:
        cpu.merge([bad], tmp_path / "out.pprof")
    assert "go tool pprof -proto failed" in str(caught.value) and not (tmp_path / "out.pprof").exists()


def test_a_generic_leaf_is_named_by_its_function_not_cut_inside_its_type_arguments():
    """The run's own leaf: `sync/atomic.(*Pointer[go.shape.struct { example.com/x.name string }]).Load` was
    reported as `x.name string }]).Load`."""
    fn = ("sync/atomic.(*Pointer[go.shape.struct { example.com/acme/underlay/pkg/underlayiplimit.name string; "
          "example.com/acme/underlay/pkg/underlayiplimit.capacityOK bool }]).Load")
    assert cpu._leaf(fn) == "atomic.(*Pointer[...]).Load"
    assert cpu._leaf("k8s.io/kubernetes/pkg/scheduler.(*Scheduler).ScheduleOne") == "scheduler.(*Scheduler).ScheduleOne"
