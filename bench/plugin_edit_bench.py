"""`inv bench.build --plugin-edit`: the plugin developer's loop, ours vs native, side by side.

The headline measure is the command a user types: `scheduler-build build --spec` of the example (its
plugin and patch, copied) after an edit, timed as a whole process (start-up, build, batching line,
summary), alternating with the plugin module's native `go build ./cmd/scheduler` (measure "edit, whole
process"). The measures below time `build.run` inside this process: the in-process figures.

(a) `build.run` of a plugin-only request (the example plugin, copied to a temporary
directory, compiled into kube-scheduler in the builder with `--network none`, verified
and published) after an edit; (b) the plugin module's own `go build ./cmd/scheduler` on
the host with the same flags (trimpath, tags, ldflags, CGO off) and a warm Go build
cache, after the same edit to its own copy. Two measures, each alternating (a, b, a,
b, ...) so machine load hits both sides:

- edit: one constant changed (a new value each round, so nothing is cached);
- no change: the same build again.

Medians and the ratio a/b are reported; (a) - (b) of the no-change runs is our fixed
overhead.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import record
from scheduler_build.inputs.build import default_request
from scheduler_build import settings
from scheduler_build.build import compile as compile_stage
from scheduler_build.build import pipeline as build
from scheduler_build.engine import connect
from scheduler_build.spec import PluginSource

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_PLUGIN = REPO / "examples/underlay/plugin"
PACKAGE = "example.com/acme/underlay/pkg/underlayiplimit"
ARGS_GO = "pkg/underlayiplimit/args.go"
_CAPACITY = re.compile(r"DefaultCapacity int64 = \d+")


def edit(plugin: Path, value: int) -> None:
    """The edit a developer makes: one constant of the plugin package, nothing else."""
    path = plugin / ARGS_GO
    path.write_text(_CAPACITY.sub(f"DefaultCapacity int64 = {value}", path.read_text(), count=1))


def native_build(plugin: Path, out: Path, flags: str) -> float:
    """The plugin module's own `go build ./cmd/scheduler` with the builder's flags; seconds."""
    argv = compile_stage.go_build_command("./cmd/scheduler", str(out), flags)
    argv.remove("-mod=vendor")  # the plugin module builds from the module cache
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local", GOFLAGS="-mod=mod")
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=plugin, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"native go build failed: {proc.stderr[-2000:]}")
    return seconds


def _ours(request: build.BuildRequest) -> tuple[float, dict]:
    start = time.monotonic()
    result = build.run(request)
    return time.monotonic() - start, result.info.to_dict()


def _ours_process(spec: Path, dist: Path) -> float:
    """The command a user types after an edit, `scheduler-build build --spec S` (what `inv build --spec S`
    runs), as a whole process: start-up, the build, the batching line and the summary; seconds."""
    argv = [sys.executable, "-m", "scheduler_build", "build", "--spec", str(spec), "--dist", str(dist), "--no-pull"]
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=spec.parent, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr[-2000:]}")
    return seconds


def whole_process(work: Path, k8s_version: str, repeats: int, flags: str, base: int) -> dict:
    """The example spec (its plugin and patch) copied to `work`, edited and built by `scheduler-build build
    --spec` as a subprocess, alternating with the plugin module's native build after the same edit."""
    shutil.copytree(REPO / "examples", work / "examples")
    spec, native_dir = work / "examples/underlay/scheduler.yaml", work / "native-whole"
    shutil.copytree(EXAMPLE_PLUGIN, native_dir)
    _ours_process(spec, work / "dist-whole")  # warms this copy's tidy, vendor and build cache
    native_build(native_dir, work / "native-whole-scheduler", flags)
    figures: dict = {"process_ours_s": [], "process_native_s": []}
    for round_ in range(repeats):
        for plugin in (spec.parent / "plugin", native_dir):
            edit(plugin, base + 50 + round_)
        seconds = _ours_process(spec, work / "dist-whole")
        figures["process_ours_s"].append(seconds)
        record.run("edit, whole process", "ours", seconds, command=f"scheduler-build build --spec {spec.name}")
        native = native_build(native_dir, work / "native-whole-scheduler", flags)
        figures["process_native_s"].append(native)
        record.run("edit, whole process", "native", native)
    return figures


def run(k8s_version: str = settings.default("k8s.version"), repeats: int = 5, whole: bool = True) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sb-bench-plugin-"))
    ours_dir, native_dir = work / "ours", work / "native"
    shutil.copytree(EXAMPLE_PLUGIN, ours_dir)
    shutil.copytree(EXAMPLE_PLUGIN, native_dir)
    source = PluginSource(package=PACKAGE, names=("UnderlayIPLimit",), path=ours_dir)
    # The Go cache volume the whole-process command (which reads the environment) uses too.
    volume = settings.gocache_volume(os.environ.get(settings.env_vars("build.gocache_volume")[1], ""))
    request = default_request(k8s_version=k8s_version, pull=False, cache_dir=settings.cache_dir(), name="bench-plugin-edit",
                              dist_dir=work / "dist", plugin_sources=(source,), gocache_volume=volume)
    base = 1000 + (os.getpid() % 1000) * 100
    try:
        _, info = _ours(request)  # warms tidy, vendor and the build cache for this plugin's shape
        flags = info["flags"]["ldflags"]
        native_build(native_dir, work / "native-scheduler", flags)
        figures: dict = {"edit_ours_s": [], "edit_native_s": [], "nochange_ours_s": [], "nochange_native_s": [],
                         "edit_phases": [], "nochange_phases": []}
        for round_ in range(repeats):
            for plugin in (ours_dir, native_dir):
                edit(plugin, base + round_)
            for kind in ("edit", "nochange"):
                seconds, info = _ours(request)
                figures[f"{kind}_ours_s"].append(seconds)
                figures[f"{kind}_phases"].append(info["phases_seconds"])
                record.run(kind, "ours", seconds, phases=info["phases_seconds"])
                assert kind == "nochange" or info["vendor"]["cached"], "an edit re-ran tidy or vendor"
                native = native_build(native_dir, work / "native-scheduler", flags)
                figures[f"{kind}_native_s"].append(native)
                record.run(kind, "native", native)
        if whole:
            figures.update(whole_process(work, k8s_version, repeats, flags, base))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    if whole:
        figures["process_ratio"] = med(figures["process_ours_s"]) / med(figures["process_native_s"])
    return {
        "k8s_version": info["kubernetes"]["version"], "builder": info["builder"]["image"], "repeats": repeats,
        # where (a) compiled: the long-lived builder (build/warm.py, the default on a local engine) or a container per build
        "long_lived_builder": request.reuse_builder if request.reuse_builder is not None else connect().local,
        **figures,
        "edit_ratio": med(figures["edit_ours_s"]) / med(figures["edit_native_s"]),
        "nochange_ratio": med(figures["nochange_ours_s"]) / med(figures["nochange_native_s"]),
        "nochange_overhead_s": med(figures["nochange_ours_s"]) - med(figures["nochange_native_s"]),
    }


def markdown(results: dict) -> str:
    med = statistics.median
    n = results["repeats"]
    return "\n".join([
        "| measure | (a) inv build, plugin spec | (b) native go build ./cmd/scheduler | a/b |",
        "|---|---|---|---|",
        f"| one constant edited (median of {n}) | {med(results['edit_ours_s']):.2f} s | {med(results['edit_native_s']):.2f} s | "
        f"{results['edit_ratio']:.2f} |",
        f"| no change (median of {n}) | {med(results['nochange_ours_s']):.2f} s | {med(results['nochange_native_s']):.2f} s | "
        f"{results['nochange_ratio']:.2f} |",
        f"| fixed overhead, no change | {results['nochange_overhead_s']:.2f} s | | |",
    ] + ([f"| one constant edited, `scheduler-build build --spec` as a whole process (median of {n}) | "
          f"{med(results['process_ours_s']):.2f} s | {med(results['process_native_s']):.2f} s | {results['process_ratio']:.2f} |"]
         if "process_ratio" in results else []))
