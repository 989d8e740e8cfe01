"""`inv bench.build --fresh-worker`: a fresh worker building a key another worker pushed to the
registry cache, side by side with a local cold build.

(a) cold, local: the machine's engine, an empty cache directory and a new Go build-cache
volume, `--cache-to` a registry on 127.0.0.1 (the push is timed apart, phase `cache-to`, and
left out of the cold figure). (b) fresh worker: a second engine of its own
(testkit/remote_engine.py: empty data root, private mount namespace, tcp://127.0.0.1),
an empty cache directory, `--cache-from` that registry. The fresh engine is given the builder
image through the API before the clock starts (a worker's builder comes with its CI image);
the host's Go module cache is the machine's (the proxy is not re-downloaded). Both binaries
must be the same bytes. Ratio (b)/(a), goal <= 0.35.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from bench import record
from scheduler_build.inputs.build import default_request
from scheduler_build import settings
from scheduler_build.build import pipeline as build
from scheduler_build.build import registry_cache, warm
from testkit import docker_sdk, remote_engine
from testkit.registry_server import Registry

REPO_ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _docker_host(host: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ["DOCKER_HOST"] = host
    try:
        yield
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


def _timed_build(request: build.BuildRequest) -> tuple[float, dict]:
    started = time.monotonic()
    result = build.run(request)
    return time.monotonic() - started, result.info


def run(k8s_version: str = settings.default("k8s.version"), spec: Path | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sb-bench-fresh-", dir="/var/tmp"))
    volume = f"scheduler-build-bench-{uuid.uuid4().hex[:8]}"
    registry = Registry(work / "registry").start()
    repo = f"{registry.host}/bench/sb-cache"
    base = default_request(k8s_version=k8s_version, pull=False, gocache_volume=volume)
    engine = None
    try:
        cold_total, cold = _timed_build(replace(base, dist_dir=work / "dist-a", cache_dir=work / "cache-a", cache_to=repo))
        push = cold["phases_seconds"].get("cache-to", 0.0)
        record.run("end to end", "local cold", cold_total - push, phases=cold["phases_seconds"])
        engine = remote_engine.start([REPO_ROOT, settings.cache_dir(), work])
        remote_engine.load_image(engine, cold["builder"]["image"])
        with _docker_host(engine.host):
            fresh_total, fresh = _timed_build(replace(base, dist_dir=work / "dist-b", cache_dir=work / "cache-b",
                                                      cache_from=repo))
        record.run("end to end", "fresh worker", fresh_total, phases=fresh["phases_seconds"])
        assert fresh["binary"]["sha256"] == cold["binary"]["sha256"], "the fresh worker's binary differs"
        return {
            "k8s_version": cold["kubernetes"]["version"],
            "cold_seconds": round(cold_total - push, 2), "push_seconds": round(push, 2),
            "fresh_worker_seconds": round(fresh_total, 2), "ratio": round(fresh_total / (cold_total - push), 3),
            "cold_phases": cold["phases_seconds"], "fresh_phases": fresh["phases_seconds"],
            "registry_bytes": sum(p.stat().st_size for p in (work / "registry").rglob("*") if p.is_file()),
            "sha256": cold["binary"]["sha256"], "cache_refs": [registry_cache.ref(repo, kind, "<key>") for kind in ("ws", "gocache")],
        }
    finally:
        if engine is not None:
            remote_engine.stop(engine)
        registry.stop()
        client = docker_sdk.client()
        # the local cold build's long-lived builder (build/warm.py) keeps the volume in use: it goes first
        for container in client.containers.list(all=True, filters={"label": f"{warm.VOLUME_LABEL}={volume}"}):
            container.remove(force=True)
        for name in (volume, f"{volume}-out"):
            try:
                client.volumes.get(name).remove(force=True)
            except Exception:
                pass
        for image in client.images.list(name=repo):
            for tag in image.tags:
                if tag.startswith(repo + ":"):  # only the cache's tags: the image may be the product's too
                    client.images.remove(tag)
        shutil.rmtree(work, ignore_errors=True)


def markdown(results: dict) -> str:
    rows = [
        "| measure | (a) local cold build | (b) fresh worker from the registry cache | b/a |",
        "|---|---|---|---|",
        f"| end to end | {results['cold_seconds']} s (+ {results['push_seconds']} s push) | "
        f"{results['fresh_worker_seconds']} s | {results['ratio']} |",
    ]
    return "\n".join(rows) + f"\n\nbinary {results['sha256'][:16]} on both sides (load: the raw file)\n"
