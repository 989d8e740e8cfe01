"""`inv bench.build --fresh-worker [--runs N]`: a fresh worker building a key another worker pushed
to the registry cache, alternated with a local cold build.

Each round (N rounds, default 3) runs (a) then (b), and bench/record.py logs each run as it ends,
so the sides alternate under the same machine load (a, b, a, b, ...):

(a) cold, local: the machine's engine, an empty cache directory, a new Go build-cache volume, an
empty Go module cache of its own (GOMODCACHE of the host's `go`: tidy and vendor download every
module from the Go module proxy), `--cache-to` a registry on 127.0.0.1 new to the round. The push
is timed apart (phase `cache-to`) and left out of (a)'s figure. A workspace image (a) built is
removed after the round, so every round builds it; one the machine had before stays, and every
round finds it (the raw file's `workspace_image_built` says which).
(b) fresh worker: a second engine started for this run alone (testkit/remote_engine.py: a new
empty data root, private mount namespace, tcp://127.0.0.1), checked empty before the clock starts
(no image, container, volume or build cache), an empty cache directory, an empty Go module cache
of its own, `--cache-from` that registry. The clock starts before the builder image is loaded into
the engine through the API (phase `builder-load`: a worker whose CI image lacks the builder pays
it) and stops when the build ends. The engine is stopped after the run and nothing of it may
survive (its data root, processes, mounts, cgroups, bridge).

Both measures log the same runs: "end to end" (b with the builder load) and "end to end, builder
image preloaded" (b without it; (a) the same figure). Every binary must be the same bytes. Each
side's module cache, cache and dist directories are removed after its run. Ratio (b)/(a) of the
medians, goal <= 0.35. Not re-created per side: the host `go`'s own build cache (GOCACHE), which
tidy and vendor barely use, and a builder image the machine's engine already has.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import docker

from bench import record
from scheduler_build import settings
from scheduler_build.build import pipeline as build
from scheduler_build.build import shared_cache, warm, workspace_image
from scheduler_build.build.compile import out_volume
from scheduler_build.inputs.build import default_request
from scheduler_build.progress import log
from testkit import docker_sdk, remote_engine
from testkit.registry_server import Registry

REPO_ROOT = Path(__file__).resolve().parent.parent
MEASURE = "end to end"
PRELOADED = "end to end, builder image preloaded"
COLD, FRESH = "local cold", "fresh worker"


@contextmanager
def _environ(**values: str) -> Iterator[None]:
    """Set variables for the build this process runs, then restore them (DOCKER_*: the local engine's)."""
    names = set(values) | ({"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT"}
                           if "DOCKER_HOST" in values else set())
    saved = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


def remove_tree(path: Path) -> None:
    """Remove a directory Go wrote into: its module cache is read-only, so directories get u+w first."""
    if not path.exists():
        return
    for root, dirs, _ in os.walk(path):
        for name in dirs:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755)
    shutil.rmtree(path, ignore_errors=True)


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@contextmanager
def module_cache(side_dir: Path) -> Iterator[Path]:
    """An empty Go module cache for one side's host `go` (tidy, vendor, mod download), removed afterwards."""
    path = side_dir / "gomodcache"
    path.mkdir(parents=True)
    try:
        with _environ(GOMODCACHE=str(path)):
            yield path
    finally:
        remove_tree(path)


def _build(request: build.BuildRequest) -> dict:
    return build.run(request).info.to_dict()


def _workspace_tag(info: dict) -> str:
    """The workspace image tag the build used (its key as pipeline._workspace_image computes it; no overlays)."""
    builder = info["builder"]
    key = workspace_image.image_key(builder["image"], builder["go_version"], info["vendor"]["key"], (),
                                    builder.get("toolchain", ""))
    return workspace_image.tag_for(key)


def _local_cold(request: build.BuildRequest, side_dir: Path) -> dict:
    """(a): one cold build on the machine's engine, its module download inside the clock, the push outside."""
    with module_cache(side_dir) as modcache:
        started = time.monotonic()
        info = _build(replace(request, dist_dir=side_dir / "dist", cache_dir=side_dir / "cache"))
        seconds = time.monotonic() - started
        downloaded = tree_bytes(modcache)
    phases = info["phases_seconds"]
    return {"seconds": seconds - phases.get("cache-to", 0.0), "push_seconds": phases.get("cache-to", 0.0),
            "phases": phases, "modcache_bytes": downloaded, "sha256": info["binary"]["sha256"],
            "builder_image": info["builder"]["image"], "k8s_version": info["kubernetes"]["version"],
            "workspace_tag": _workspace_tag(info)}


def engine_contents(engine: remote_engine.RemoteEngine) -> dict[str, int]:
    """How many images, containers, volumes and build-cache entries the engine holds."""
    client = engine.client()
    try:
        usage = client.df()
    finally:
        client.close()
    return {kind.lower(): len(usage.get(kind) or []) for kind in ("Images", "Containers", "Volumes", "BuildCache")}


def own_leftovers(engine: remote_engine.RemoteEngine) -> list[str]:
    """What of this engine survived its stop; bridges other sessions made or removed meanwhile are theirs."""
    return [item for item in remote_engine.leftovers(engine)
            if not item.startswith("interface ") or item == f"interface {engine.bridge}"]


def _fresh_worker(request: build.BuildRequest, side_dir: Path, builder_image: str, hidden: list[Path]) -> dict:
    """(b): a new, verified-empty engine; builder load, module download and build inside one clock."""
    engine = remote_engine.start(hidden)  # a worker's engine is up before its job: not timed
    try:
        contents = engine_contents(engine)
        if any(contents.values()):
            raise RuntimeError(f"the fresh engine at {engine.root} is not empty: {contents}")
        with module_cache(side_dir) as modcache:
            started = time.monotonic()
            remote_engine.load_image(engine, builder_image)  # from the machine's engine: before DOCKER_HOST moves
            loaded = time.monotonic() - started
            with _environ(DOCKER_HOST=engine.host):
                info = _build(replace(request, dist_dir=side_dir / "dist", cache_dir=side_dir / "cache"))
            seconds = time.monotonic() - started
            downloaded = tree_bytes(modcache)
    finally:
        remote_engine.stop(engine)
    left = own_leftovers(engine)
    if left:
        raise RuntimeError(f"the fresh engine left {', '.join(left)}")
    return {"seconds": seconds, "builder_load_seconds": loaded, "phases": {"builder-load": loaded, **info["phases_seconds"]},
            "modcache_bytes": downloaded, "sha256": info["binary"]["sha256"], "engine_at_start": contents}


def _clean_local(volume: str, repo: str, workspace_tag: str) -> None:
    """Remove what a round left on the machine's engine: its builder, volumes and cache tags (and the
    workspace image when the round built it)."""
    client = docker_sdk.client()
    # the local cold build's long-lived builder (build/warm.py) keeps the volume in use: it goes first
    for container in client.containers.list(all=True, filters={"label": f"{warm.VOLUME_LABEL}={volume}"}):
        container.remove(force=True)
    for name in (volume, out_volume(volume)):
        _remove(lambda name=name: client.volumes.get(name).remove(force=True), f"volume {name}")
    for image in client.images.list(name=repo):
        for tag in image.tags:
            if tag.startswith(repo + ":"):  # only the cache's tags: the image may be the product's too
                client.images.remove(tag)
    if workspace_tag:
        _remove(lambda: client.images.remove(workspace_tag), f"image {workspace_tag}")


def _remove(remove: Callable[[], object], what: str) -> None:
    """Remove one thing the round made; absent is fine, anything else is named (it is left behind)."""
    try:
        remove()
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        log(f"fresh worker bench: could not remove {what}: {exc.explanation or exc}")


def workspace_tags() -> set[str]:
    """The workspace images the machine's engine has: those present before the bench are not ours to remove."""
    client = docker_sdk.client()
    return {tag for image in client.images.list(name=workspace_image.REPO) for tag in image.tags}


def _round(number: int, k8s_version: str, work: Path, hidden: list[Path], preexisting: set[str]) -> dict:
    """(a) then (b), each logged as it ends; a registry, volume and directories of the round's own."""
    work.mkdir(parents=True)
    volume = f"scheduler-build-bench-{uuid.uuid4().hex[:8]}"
    registry = Registry(work / "registry").start()
    repo = f"{registry.host}/bench/sb-cache"
    base = default_request(k8s_version=k8s_version, pull=False, gocache_volume=volume)
    built_tag = ""
    try:
        cold = _local_cold(replace(base, cache_to=repo), work / "a")
        built = cold["workspace_tag"] not in preexisting
        built_tag = cold["workspace_tag"] if built else ""
        remove_tree(work / "a")
        record.run(MEASURE, COLD, cold["seconds"], round=number, phases=cold["phases"],
                   modcache_bytes=cold["modcache_bytes"], workspace_image_built=built)
        record.run(PRELOADED, COLD, cold["seconds"], round=number)
        fresh = _fresh_worker(replace(base, cache_from=repo), work / "b", cold["builder_image"], hidden)
        remove_tree(work / "b")
        record.run(MEASURE, FRESH, fresh["seconds"], round=number, phases=fresh["phases"],
                   modcache_bytes=fresh["modcache_bytes"], engine_at_start=fresh["engine_at_start"])
        record.run(PRELOADED, FRESH, fresh["seconds"] - fresh["builder_load_seconds"], round=number)
        assert fresh["sha256"] == cold["sha256"], f"round {number}: the fresh worker's binary differs"
        log(f"round {number}: local cold {cold['seconds']:.1f} s (+ {cold['push_seconds']:.1f} s push), fresh worker "
            f"{fresh['seconds']:.1f} s (builder load {fresh['builder_load_seconds']:.1f} s)")
        refs = [shared_cache.ref(repo, kind, "<key>") for kind in ("ws", "gocache")]
        return {"cold": cold, "fresh": fresh, "registry_bytes": tree_bytes(work / "registry"),
                "workspace_image_built": built, "cache_refs": refs}
    finally:
        registry.stop()
        _clean_local(volume, repo, built_tag)
        remove_tree(work)


def run(k8s_version: str = settings.default("k8s.version"), runs: int = 3) -> dict:
    """`runs` rounds of (a) local cold, (b) fresh worker; medians per side."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, not {runs}")
    work = Path(tempfile.mkdtemp(prefix="sb-bench-fresh-", dir="/var/tmp"))
    hidden = [REPO_ROOT, settings.cache_dir(), work]
    preexisting = workspace_tags()
    rounds: list[dict] = []
    try:
        for number in range(1, runs + 1):
            log(f"fresh worker bench: round {number} of {runs}")
            rounds.append(_round(number, k8s_version, work / f"round-{number}", hidden, preexisting))
    finally:
        remove_tree(work)
    return summarize(rounds)


def _median_phases(phases: list[dict[str, float]]) -> dict[str, float]:
    names = sorted({name for p in phases for name in p})
    return {name: round(statistics.median(p.get(name, 0.0) for p in phases), 2) for name in names}


def summarize(rounds: list[dict]) -> dict:
    """The results: medians per side over the rounds, n, ratios of medians, the one binary."""
    def med(side: str, key: str) -> float:
        return round(statistics.median(r[side][key] for r in rounds), 2)

    shas = sorted({r[side]["sha256"] for r in rounds for side in ("cold", "fresh")})
    assert len(shas) == 1, f"the rounds built different binaries: {shas}"
    cold, fresh, load = med("cold", "seconds"), med("fresh", "seconds"), med("fresh", "builder_load_seconds")
    preloaded = round(statistics.median(r["fresh"]["seconds"] - r["fresh"]["builder_load_seconds"] for r in rounds), 2)
    return {
        "k8s_version": rounds[0]["cold"]["k8s_version"], "n": {COLD: len(rounds), FRESH: len(rounds)},
        "cold_seconds": cold, "push_seconds": med("cold", "push_seconds"),
        "fresh_worker_seconds": fresh, "builder_load_seconds": load, "fresh_preloaded_seconds": preloaded,
        "ratio": round(fresh / cold, 3), "ratio_preloaded": round(preloaded / cold, 3),
        "modcache_bytes": {COLD: int(med("cold", "modcache_bytes")), FRESH: int(med("fresh", "modcache_bytes"))},
        "cold_phases": _median_phases([r["cold"]["phases"] for r in rounds]),
        "fresh_phases": _median_phases([r["fresh"]["phases"] for r in rounds]),
        "workspace_image_built": [r["workspace_image_built"] for r in rounds],
        "registry_bytes": int(statistics.median(r["registry_bytes"] for r in rounds)),
        "sha256": shas[0], "cache_refs": rounds[0]["cache_refs"],
    }


def markdown(results: dict) -> str:
    n = results["n"]
    n_text = f"n={n[COLD]}" if n[COLD] == n[FRESH] else f"n={n[COLD]}/{n[FRESH]}"
    mb = {side: f"{value / 2**20:.0f} MB" for side, value in results["modcache_bytes"].items()}
    rows = [
        "| measure (medians) | (a) local cold build | (b) fresh worker from the registry cache | b/a | runs per side |",
        "|---|---|---|---|---|",
        (f"| {MEASURE}: module download inside, (b) with the builder image load | {results['cold_seconds']} s "
         f"(+ {results['push_seconds']} s push) | {results['fresh_worker_seconds']} s | {results['ratio']} | {n_text} |"),
        (f"| {PRELOADED} | {results['cold_seconds']} s | {results['fresh_preloaded_seconds']} s | "
         f"{results['ratio_preloaded']} | {n_text} |"),
        f"| builder image load into the empty engine | - | {results['builder_load_seconds']} s | | {n_text} |",
        f"| Go modules downloaded (module cache) | {mb[COLD]} | {mb[FRESH]} | | {n_text} |",
    ]
    phases = [f"- {label}: " + ", ".join(f"{k} {v}" for k, v in results[key].items() if v >= 0.005)
              for label, key in (("(a)", "cold_phases"), ("(b)", "fresh_phases"))]
    return ("\n".join(rows) + "\n\nphases (medians, s):\n" + "\n".join(phases)
            + f"\n\nbinary {results['sha256'][:16]} on every run of both sides (load: the raw file)\n")
