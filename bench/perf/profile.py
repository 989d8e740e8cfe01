"""`bench.perf --profile`: where each cell's CPU goes, per plugin, from the harness's own CPU profile.

Each harness run gets `-test.cpuprofile FILE` (the Go test binary's profiler: the whole process, API
server and scheduler; etcd runs apart). The file stays beside the raw file, in pprof format. Its samples
are read through `go tool pprof -traces` (one stack per sample group, leaf first, inlined frames shown),
so nothing here decodes protobuf and pprof's own symbolisation is what counts.

Scheduling CPU: samples with a frame of the scheduler's cycle (SCHEDULING): `(*Scheduler).` methods
(ScheduleOne, schedulingCycle, findNodesThatPassFilters' parallel closures, the binding cycle) and the
framework's `(*frameworkImpl).` runners (Filter and Score run on ParallelizeUntil's goroutines, whose
stacks start there, not under ScheduleOne). A plugin's share: the samples with a frame of its Go package
(cumulative: its callees count), split by the outermost such frame's method (Filter, Score, ...), with the
leaf functions that cost most inside it. The framework's share is the rest of scheduling CPU.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.errors import UserError

SCHEDULING = ("k8s.io/kubernetes/pkg/scheduler.(*Scheduler).",
              "k8s.io/kubernetes/pkg/scheduler/framework/runtime.(*frameworkImpl).")
TOP_LEAVES = 3
_VALUE = re.compile(r"^\s*([0-9.]+)(ns|us|µs|ms|s|min|h)?\s+(\S.*)$")
_UNIT = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9}
# runtime internals grouped under one readable name in the leaf list
_GROUPS = (("runtime.mapaccess", "map lookups"), ("internal/runtime/maps.", "map lookups"),
           ("runtime.mallocgc", "allocation"), ("runtime.newobject", "allocation"),
           ("runtime.makemap", "allocation"), ("runtime.growslice", "allocation"),
           ("aeshash", "map lookups"), ("runtime.memhash", "map lookups"))


@dataclass
class Stack:
    nanos: float
    frames: list[str]  # leaf first


@dataclass
class Attribution:
    total_ns: float = 0.0
    scheduling_ns: float = 0.0
    plugins: dict[str, dict] = field(default_factory=dict)  # name -> {ns, points: {point: {ns, leaves}}}


def go_binary() -> str:
    found = shutil.which("go")
    if not found:
        raise UserError("--profile needs `go` on PATH (its pprof reads the profiles)", "install Go or drop --profile")
    return found


def traces(profile: Path, go: str | None = None) -> list[Stack]:
    """The profile's stacks with their CPU time (`go tool pprof -traces`)."""
    out = subprocess.run([go or go_binary(), "tool", "pprof", "-traces", str(profile)], capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise UserError(f"go tool pprof -traces {profile} failed: {out.stderr.strip()[-300:]}",
                        "the file should be a CPU profile the harness wrote")
    return parse_traces(out.stdout)


def parse_traces(text: str) -> list[Stack]:
    """pprof's -traces text -> stacks (pure). Blocks are separated by `---+---` lines; the first line of a
    block carries the value, then one function per line, leaf first."""
    stacks: list[Stack] = []
    current: Stack | None = None
    for line in text.splitlines():
        if line.startswith("-----------+"):
            current = None
            continue
        if current is None:
            m = _VALUE.match(line)
            if m and "|" not in line:
                current = Stack(float(m.group(1)) * _UNIT.get(m.group(2) or "ns", 1), [m.group(3).strip()])
                stacks.append(current)
            continue
        name = line.strip()
        if name and not name.startswith("bytes:"):
            current.frames.append(name)
    return stacks


def _point(frames: list[str], package: str) -> str | None:
    """The extension point: the method of the outermost frame in the package (frames are leaf first)."""
    for fn in reversed(frames):
        if fn.startswith(package + "."):
            return fn.rsplit(".", 1)[-1].split("-")[0] or fn
    return None


def _leaf(fn: str) -> str:
    for prefix, group in _GROUPS:
        if prefix in fn:
            return group
    return _without_type_arguments(fn).rsplit("/", 1)[-1]  # package path dropped: sync.(*RWMutex).RLock


def _without_type_arguments(fn: str) -> str:
    """`sync/atomic.(*Pointer[go.shape.struct { a/b.c int }]).Load` as `sync/atomic.(*Pointer[...]).Load`: a
    generic's type arguments hold package paths and dots that would cut the name in the wrong place."""
    out, depth = [], 0
    for ch in fn:
        if ch == "[":
            depth += 1
            if depth == 1:
                out.append("[...]")
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def attribute(stacks: list[Stack], plugins: dict[str, str]) -> Attribution:
    """Scheduling CPU and each plugin's share (pure). plugins: name -> Go package."""
    result = Attribution(plugins={name: {"ns": 0.0, "points": {}} for name in plugins})
    for stack in stacks:
        result.total_ns += stack.nanos
        if not any(fn.startswith(SCHEDULING) for fn in stack.frames):
            continue
        result.scheduling_ns += stack.nanos
        for name, package in plugins.items():
            point = _point(stack.frames, package)
            if point is None:
                continue
            entry = result.plugins[name]
            entry["ns"] += stack.nanos
            slot = entry["points"].setdefault(point, {"ns": 0.0, "leaves": {}})
            slot["ns"] += stack.nanos
            leaf = _leaf(stack.frames[0])
            slot["leaves"][leaf] = slot["leaves"].get(leaf, 0.0) + stack.nanos
    return result


def summary(a: Attribution) -> dict:
    """Shares (percent of scheduling CPU) for the raw file (pure)."""
    sched = a.scheduling_ns or 1.0
    plugins = {}
    for name, entry in a.plugins.items():
        points = {}
        for point, slot in sorted(entry["points"].items(), key=lambda kv: -kv[1]["ns"]):
            leaves = sorted(slot["leaves"].items(), key=lambda kv: -kv[1])[:TOP_LEAVES]
            points[point] = {"percent": round(100 * slot["ns"] / sched, 2),
                             "leaves": {k: round(100 * v / sched, 2) for k, v in leaves}}
        plugins[name] = {"percent": round(100 * entry["ns"] / sched, 2), "points": points}
    in_plugins = sum(e["ns"] for e in a.plugins.values())
    return {"total_s": round(a.total_ns / 1e9, 3), "scheduling_s": round(a.scheduling_ns / 1e9, 3),
            "scheduling_percent_of_process": round(100 * a.scheduling_ns / (a.total_ns or 1.0), 2),
            "framework_percent": round(100 * (a.scheduling_ns - in_plugins) / sched, 2), "plugins": plugins}


def median_summary(runs: list[dict]) -> dict:
    """A cell's runs -> the median run's summary by scheduling share of the plugins (pure): one real run,
    so its parts add up, and which run it is stays named."""
    runs = [r for r in runs if r]
    if not runs:
        return {}
    ordered = sorted(runs, key=lambda r: (sum(p["percent"] for p in r["plugins"].values()), r["framework_percent"]))
    return ordered[(len(ordered) - 1) // 2]


def line(label: str, variant: str, s: dict) -> str:
    """One report line: each plugin's share with its points and costliest leaves, and the framework's (pure)."""
    parts = []
    for name, p in s.get("plugins", {}).items():
        points = ", ".join(f"{point} {slot['percent']:.0f}% ("
                           + ", ".join(f"{leaf} {pct:.0f}%" for leaf, pct in slot["leaves"].items()) + ")"
                           for point, slot in p["points"].items())
        parts.append(f"{name} {p['percent']:.1f}% of scheduling CPU" + (f": {points}" if points else ""))
    parts.append(f"framework and in-tree plugins {s['framework_percent']:.1f}%")
    return (f"- {label} {variant} profile ({s.get('file', '')}): scheduling {s['scheduling_s']:.1f} s CPU, "
            f"{s['scheduling_percent_of_process']:.0f}% of the process; " + "; ".join(parts))


def merge(files: list[Path], out: Path, go: str | None = None) -> Path:
    """One profile of several (`go tool pprof -proto`), e.g. a variant's runs: `build --pgo` input."""
    tmp = out.with_name(out.name + ".tmp")
    done = subprocess.run([go or go_binary(), "tool", "pprof", "-proto", *map(str, files)], stdout=open(tmp, "wb"),
                          stderr=subprocess.PIPE, text=False, timeout=600)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise UserError(f"go tool pprof -proto failed: {done.stderr.decode(errors='replace').strip()[-300:]}",
                        f"the profiles: {', '.join(map(str, files))}")
    tmp.replace(out)
    return out


def svg(profile: Path, out: Path, focus: str = "", go: str | None = None) -> Path | None:
    """pprof's call graph as SVG (Graphviz's dot draws it); None when dot is missing (said once by the caller).
    focus: a regexp of functions to keep (the scheduler's), so the picture is the scheduling CPU."""
    if not shutil.which("dot"):
        return None
    argv = [go or go_binary(), "tool", "pprof", "-svg", "-nodefraction=0.01", "-output", str(out)]
    if focus:
        argv.append(f"-focus={focus}")
    done = subprocess.run([*argv, str(profile)], capture_output=True, text=True, timeout=600)
    return out if done.returncode == 0 and out.is_file() else None


def focus_regexp() -> str:
    return "|".join(re.escape(prefix) for prefix in SCHEDULING)
