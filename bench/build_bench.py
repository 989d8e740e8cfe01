"""`inv bench.build`: our containerised build against a native `go build`, side by side.

(a) `build.run` (resolve, builder, cached vendor, compile in a one-shot builder container
with no network, verify, atomic publish); (b) the host's `go build` of a copy of the same
wrapper module with the same flags. Warm: each round stamps a new version (the main
package's -X flags), so both sides relink with a warm Go build cache, as after an edit of
the main package; the sides alternate in one process so machine noise hits both; medians
and the ratio a/b. Cold: a new Go build-cache volume (and output volume) and dist
directory on (a), a new GOCACHE directory and no output on (b). Every build of (a) must
compile in a container: the action record's skip (build/uptodate.py) is bypassed and a
build that wrote no new record fails the bench. Peak memory is the compile's: the
container's cgroup for (a), the largest descendant's max RSS for (b).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from bench import record

from testkit import docker_sdk
from scheduler_build.inputs.build import default_request
from scheduler_build.build import pipeline as build
from scheduler_build.build import compile as compile_stage
from scheduler_build.resolve import versions
from scheduler_build import settings
from scheduler_build.build.workspace import render_wrapper
from scheduler_build.build import uptodate, vendor

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory/docker")


class ContainerPeakMemory:
    """Poll the anonymous memory (rss) of the builder's containers' cgroup (v1), keep the maximum.

    The cgroup's own high-water mark counts page cache too, which a native RSS does not.
    """

    def __init__(self, image: str):
        self.image, self.peak, self._stop = image, 0, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        client = docker_sdk.client()
        while not self._stop.is_set():
            for container in client.containers.list(filters={"ancestor": self.image}):
                path = CGROUP_MEMORY / container.id / "memory.stat"
                try:
                    stats = dict(line.split() for line in path.read_text().splitlines())
                    self.peak = max(self.peak, int(stats.get("total_rss", stats.get("rss", 0))))
                except (OSError, ValueError):
                    pass
            time.sleep(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _native_build(source: Path, out: Path, gocache: Path, flags: str) -> tuple[float, int]:
    """Run host `go build` in a child Python so its RUSAGE_CHILDREN is this build's alone."""
    argv = compile_stage.go_build_command(".", str(out), flags)
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=vendor", GOPROXY="off", GOTOOLCHAIN="local", GOCACHE=str(gocache))
    probe = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.monotonic()\n"
        f"code = subprocess.call({argv!r}, cwd={str(source)!r})\n"
        "print(json.dumps([code, time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    code, seconds, maxrss_kib = json.loads(proc.stdout.strip().splitlines()[-1])
    if code != 0:
        raise RuntimeError(f"native go build failed: {proc.stderr[-2000:]}")
    return seconds, maxrss_kib * 1024


@contextmanager
def real_compiles() -> Iterator[list[str]]:
    """Builds inside compile in a container whatever the action record says (a fresh record); yields
    the action records written, one per container compile that succeeded (uptodate.remember)."""
    written: list[str] = []
    up_to_date, remember = uptodate.up_to_date, uptodate.remember

    def remembered(record: Path, action: str, dest: Path) -> None:
        written.append(str(record))
        remember(record, action, dest)

    uptodate.up_to_date = lambda *args: False
    uptodate.remember = remembered
    try:
        yield written
    finally:
        uptodate.up_to_date, uptodate.remember = up_to_date, remember


def _ours(request: build.BuildRequest) -> tuple[float, str]:
    """One build that must compile; (seconds, its ldflags)."""
    with real_compiles() as written:
        start = time.monotonic()
        result = build.run(request)
        seconds = time.monotonic() - start
    assert written, "no compile ran: the action record skipped the container"
    return seconds, result.info.flags.ldflags


def run(k8s_version: str = settings.default("k8s.version"), repeats: int = 5, cold: bool = True) -> dict:
    cache = settings.cache_dir()
    resolution = versions.resolve(k8s_version, cache)
    work = Path(tempfile.mkdtemp(prefix="sb-bench-build-"))
    # The one-shot container, not the long-lived builder: the compile path every engine takes.
    request = default_request(k8s_version=k8s_version, pull=False, cache_dir=cache, dist_dir=work / "dist",
                              reuse_builder=False)
    first = build.run(request)  # warms vendor, tidy and the default Go cache volume
    workspace = render_wrapper(resolution)
    vendored = vendor.prepare(workspace, cache)
    image = first.info.builder.image

    # The native side builds a copy of the very same source directory.
    native_src = work / "native-src"
    native_src.mkdir()
    for item in vendored.workspace_dir.iterdir():
        if item.is_file():
            shutil.copy2(item, native_src / item.name)
    (native_src / "vendor").symlink_to(vendored.vendor_dir)
    native_cache = cache / "bench-native-gocache"
    native_out = native_src / "kube-scheduler"
    _native_build(native_src, native_out, native_cache, first.info.flags.ldflags)  # warm

    results: dict = {"k8s_version": resolution.version, "builder": image, "repeats": repeats}
    ours, native = [], []
    for round_ in range(repeats):
        # A new version stamp each round: the main package's -X flags change, so both sides relink
        # (a warm Go cache otherwise), as after an edit of one file of the main package.
        seconds, flags = _ours(replace(request, version_suffix=f"bench.{os.getpid()}.{round_}"))
        ours.append(seconds)
        record.run("warm", "ours", seconds)
        seconds, _ = _native_build(native_src, native_out, native_cache, flags)
        native.append(seconds)
        record.run("warm", "native", seconds)
    results["warm_ours_s"] = ours
    results["warm_native_s"] = native
    results["warm_ratio"] = statistics.median(ours) / statistics.median(native)
    if cold:
        results.update(_cold(request, image, native_src, native_out, work))
    shutil.rmtree(work, ignore_errors=True)
    return results


def _cold(request: build.BuildRequest, image: str, native_src: Path, native_out: Path, work: Path) -> dict:
    """One cold build per side: a new Go cache volume (and so a new output volume), a new dist
    directory and no action record on ours; a new GOCACHE directory and no output natively."""
    volume = f"sb-bench-cold-{uuid.uuid4().hex[:8]}"
    cold_dir = work / "cold-gocache"
    client = docker_sdk.client()
    out: dict = {}
    try:
        with ContainerPeakMemory(image) as peak:
            seconds, flags = _ours(replace(request, gocache_volume=volume, dist_dir=work / "cold-dist"))
        out["cold_ours_s"], out["cold_ours_peak_bytes"] = seconds, peak.peak
        record.run("cold", "ours", seconds)
        native_out.unlink(missing_ok=True)
        seconds, maxrss = _native_build(native_src, native_out, cold_dir, flags)
        out["cold_native_s"], out["cold_native_peak_bytes"] = seconds, maxrss
        record.run("cold", "native", seconds)
    finally:
        shutil.rmtree(cold_dir, ignore_errors=True)
        for name in (volume, compile_stage.out_volume(volume)):
            try:
                client.volumes.get(name).remove(force=True)
            except Exception:
                pass
    return out


def markdown(results: dict) -> str:
    med = statistics.median
    rows = [
        "| measure | (a) inv build in container | (b) native go build | a/b |",
        "|---|---|---|---|",
        f"| warm, main package relinked (new version stamp; median of {results['repeats']}) | {med(results['warm_ours_s']):.1f} s | "
        f"{med(results['warm_native_s']):.1f} s | {results['warm_ratio']:.2f} |",
    ]
    if "cold_ours_s" in results:
        rows.append(f"| cold (empty Go build cache) | {results['cold_ours_s']:.0f} s | {results['cold_native_s']:.0f} s | "
                    f"{results['cold_ours_s'] / results['cold_native_s']:.2f} |")
        rows.append(f"| peak memory of the compile | {results['cold_ours_peak_bytes'] / 2**30:.2f} GiB | "
                    f"{results['cold_native_peak_bytes'] / 2**30:.2f} GiB | |")
    return "\n".join(rows)
