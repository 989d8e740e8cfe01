"""`inv bench.build`: our containerised build against a native `go build`, side by side.

(a) `build.run` (resolve, builder, cached vendor, compile in the builder with no
network, verify, atomic publish) after touching one source file of the wrapper
module; (b) the host's `go build` of the same wrapper module with the same flags
and an equally warm Go build cache, after touching the same file. Both are run
alternately in one process so machine noise hits both; medians and the ratio a/b
are reported. Cold builds use a fresh Go build cache (volume / directory) on each
side; peak memory is the compile's: the container's cgroup for (a), the largest
descendant's max RSS for (b).
"""

from __future__ import annotations

import dataclasses
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
from pathlib import Path

from testkit import docker_sdk
from scheduler_build.inputs.build import default_request
from scheduler_build.build import pipeline as build
from scheduler_build.build import compile as compile_stage
from scheduler_build.resolve import versions
from scheduler_build import settings
from scheduler_build.build.workspace import render_wrapper
from scheduler_build.build import vendor

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


def run(k8s_version: str = settings.default("k8s.version"), repeats: int = 5, cold: bool = True) -> dict:
    cache = settings.cache_dir()
    resolution = versions.resolve(k8s_version, cache)
    request = default_request(k8s_version=k8s_version, pull=False, cache_dir=cache,
                                 dist_dir=Path(tempfile.mkdtemp(prefix="sb-bench-dist-")))
    first = build.run(request)  # warms vendor, tidy and the default Go cache volume
    workspace = render_wrapper(resolution)
    vendored = vendor.prepare(workspace, cache)
    flags = first.info.flags.ldflags
    image = first.info.builder.image

    # The native side builds a copy of the very same source directory.
    native_src = Path(tempfile.mkdtemp(prefix="sb-bench-src-"))
    for item in vendored.workspace_dir.iterdir():
        if item.is_file():
            shutil.copy2(item, native_src / item.name)
    (native_src / "vendor").symlink_to(vendored.vendor_dir)
    native_cache = cache / "bench-native-gocache"
    native_out = native_src / "kube-scheduler"
    _native_build(native_src, native_out, native_cache, flags)  # warm

    results: dict = {"k8s_version": resolution.version, "builder": image, "repeats": repeats,
                     "machine": "2-core / 24 GiB Debian bookworm VM (shared, noisy)"}
    ours, native = [], []
    for _ in range(repeats):
        for path in (vendored.workspace_dir / "main.go", native_src / "main.go"):
            path.touch()
        start = time.monotonic()
        build.run(request)
        ours.append(time.monotonic() - start)
        seconds, _ = _native_build(native_src, native_out, native_cache, flags)
        native.append(seconds)
    results["warm_ours_s"] = ours
    results["warm_native_s"] = native
    results["warm_ratio"] = statistics.median(ours) / statistics.median(native)

    if cold:
        volume = f"sb-bench-cold-{uuid.uuid4().hex[:8]}"
        cold_dir = Path(tempfile.mkdtemp(prefix="sb-bench-cold-gocache-"))
        client = docker_sdk.client()
        try:
            with ContainerPeakMemory(image) as peak:
                start = time.monotonic()
                build.run(dataclasses.replace(request, gocache_volume=volume))
                results["cold_ours_s"] = time.monotonic() - start
            results["cold_ours_peak_bytes"] = peak.peak
            seconds, maxrss = _native_build(native_src, native_out, cold_dir, flags)
            results["cold_native_s"] = seconds
            results["cold_native_peak_bytes"] = maxrss
        finally:
            shutil.rmtree(cold_dir, ignore_errors=True)
            try:
                client.volumes.get(volume).remove(force=True)
            except Exception:
                pass
    shutil.rmtree(native_src, ignore_errors=True)
    shutil.rmtree(request.dist_dir, ignore_errors=True)
    return results


def markdown(results: dict) -> str:
    med = statistics.median
    rows = [
        "| measure | (a) inv build in container | (b) native go build | a/b |",
        "|---|---|---|---|",
        f"| warm, one file touched (median of {results['repeats']}) | {med(results['warm_ours_s']):.1f} s | "
        f"{med(results['warm_native_s']):.1f} s | {results['warm_ratio']:.2f} |",
    ]
    if "cold_ours_s" in results:
        rows.append(f"| cold (empty Go build cache) | {results['cold_ours_s']:.0f} s | {results['cold_native_s']:.0f} s | "
                    f"{results['cold_ours_s'] / results['cold_native_s']:.2f} |")
        rows.append(f"| peak memory of the compile | {results['cold_ours_peak_bytes'] / 2**30:.2f} GiB | "
                    f"{results['cold_native_peak_bytes'] / 2**30:.2f} GiB | |")
    return "\n".join(rows)
