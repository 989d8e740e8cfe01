"""`inv bench.build --plugin-edit`: the plugin developer's loop, ours vs native, side by side.

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


def run(k8s_version: str = settings.default("k8s.version"), repeats: int = 5) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sb-bench-plugin-"))
    ours_dir, native_dir = work / "ours", work / "native"
    shutil.copytree(EXAMPLE_PLUGIN, ours_dir)
    shutil.copytree(EXAMPLE_PLUGIN, native_dir)
    source = PluginSource(package=PACKAGE, names=("UnderlayIPLimit",), path=ours_dir)
    request = default_request(k8s_version=k8s_version, pull=False, cache_dir=settings.cache_dir(), name="bench-plugin-edit",
                                 dist_dir=work / "dist", plugin_sources=(source,))
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
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
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
    ])
