"""bench.image: image overhead, image.build cold/warm vs `docker build`, push vs `docker push`.

Side by side in one run, on one native kube-scheduler build (warm from the caches):
- size: the image's uncompressed size and compressed layer against the binary;
- build: our assembly (cold: no layout and no engine image; warm: identical inputs,
  skipped; forced: rebuilt from scratch with --force) against the classic builder
  building dockerfiles/scheduler.Dockerfile from the same root file system
  (no build cache: its image is removed after each run); each round runs ours cold,
  warm, forced, then `docker build`, so forced and `docker build` alternate;
- push: our distribution-API push to a fresh local registry (cold) and again
  (warm: every blob present) against the engine's `docker push` of the same image
  to another fresh registry (docker-py, errors read from the stream).
"""

from __future__ import annotations

import shutil
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from invoke import Config, Context

from bench import record
from scheduler_build.inputs.build import default_request
from scheduler_build.engine import connect
from scheduler_build import platforms, settings
from scheduler_build.build import pipeline as build
from scheduler_build.inputs import image as image_inputs
from scheduler_build.image import assemble, oci
from scheduler_build.image import request as image_request
from scheduler_build.publish import distribution, registry
from scheduler_build.flows import image as image_flow
from testkit import docker_sdk
from testkit.registry_server import Registry

REPO = Path(__file__).resolve().parent.parent


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def run(k8s_version: str = settings.default("k8s.version"), repeats: int = 3) -> dict:
    client = docker_sdk.client()
    arch = platforms.host_arch()
    work = Path(tempfile.mkdtemp(prefix="bench-image-"))
    repository = "scheduler-build-bench/kube-scheduler"
    try:
        built = build.run(default_request(k8s_version=k8s_version, dist_dir=work / "dist",
                                             cache_dir=settings.cache_dir(), pull=False))
        context = Context(config=Config(defaults=settings.DEFAULTS))
        opts = image_inputs.image_inputs(context, no_spec=True, k8s_version=k8s_version, platforms=f"linux/{arch}",
                                  dist=work / "dist", repository=repository)

        def package(force: bool = False) -> assemble.ImageResult:
            """What `inv image.build` does once dist/ holds the binary: assemble, then load."""
            request = image_request.prepare(image_request.plan(opts, arch))
            request.force = force
            return image_flow.build_and_load(request, arch)

        layout = work / "dist" / "kube-scheduler" / built.info.kubernetes.version / "image"
        result, ours = _measure_builds(client, repository, package, layout, work / "context", repeats)
        baseline = ours.pop("docker_build")
        native = result.platforms[0]
        engine_image = client.images.get(native.config_digest)
        size = {
            "binary_bytes": native.binary_size,
            "image_bytes": engine_image.attrs["Size"],
            "overhead_bytes": engine_image.attrs["Size"] - native.binary_size,
            "compressed_layer_bytes": native.layer_size,
        }
        push = _measure_pushes(client, result, engine_image, work, repeats)
        _drop_engine_images(client, repository)
        return {
            "k8s_version": built.info.kubernetes.version,
            "platform": f"linux/{arch}",
            "repeats": repeats,
            "size": size,
            "build_seconds": {"cold": _median(ours["cold"]), "warm": _median(ours["warm"]),
                              "forced": _median(ours["forced"]), "docker_build_baseline": _median(baseline)},
            "push_seconds": {"cold": _median(push["push_cold"]), "warm": _median(push["push_warm"]),
                             "docker_push_baseline": _median(push["docker_push"])},
            "raw": {**ours, "docker_build": baseline, **push},
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _drop_engine_images(client, repository: str) -> None:
    for img in client.images.list(name=repository):
        client.images.remove(img.id, force=True)


# What each step of a round logs (bench/record.py): the forced build and `docker build` are one measure,
# two sides, run back to back in every round so they alternate (ours, docker build, ours, ...).
STEPS = {"cold": ("image build cold", "ours"), "warm": ("image build warm", "ours"),
         "forced": ("image build forced", "ours"), "docker_build": ("image build forced", "docker build")}


def build_order(repeats: int) -> list[str]:
    """The steps in the order they run: per round ours cold, warm (skipped) and forced, then `docker build`."""
    return [step for _ in range(repeats) for step in ("cold", "warm", "forced", "docker_build")]


def _measure_builds(client, repository: str, package, layout: Path, context: Path, repeats: int):
    """Our assembly (cold: no layout, no engine image; warm: skipped; forced) and `docker build`, per round."""
    times: dict[str, list[float]] = {step: [] for step in STEPS}
    result = None
    for step in build_order(repeats):
        if step == "cold":
            _drop_engine_images(client, repository)
            _remove_layout(layout)
        elif step == "docker_build" and not context.exists():
            _docker_context(result, context)  # the first cold build's root file system
        start = time.monotonic()
        if step == "docker_build":
            connect().build(context, f"{repository}:dockerfile", on_line=lambda line: None)
        else:
            done = package(force=step == "forced")
        times[step].append(time.monotonic() - start)
        record.run(*STEPS[step], times[step][-1])
        if step == "cold":
            result = done
        elif step == "warm":
            assert done.skipped
        elif step == "docker_build":
            # Its layers would be the next run's build cache: every `docker build` runs without one.
            client.images.remove(f"{repository}:dockerfile", force=True)
    return result, times


def _remove_layout(layout: Path) -> None:
    """No layout for a cold build: the published directory (atomic.publish_dir), or an earlier
    layout's link and the hidden directories it pointed to."""
    for old in layout.parent.glob(f".{layout.name}.*"):
        shutil.rmtree(old)
    if layout.is_dir() and not layout.is_symlink():
        shutil.rmtree(layout)
    else:
        layout.unlink(missing_ok=True)


def _docker_context(result, context: Path) -> None:
    """The classic builder's context: the layer's root file system and dockerfiles/scheduler.Dockerfile."""
    (context / "rootfs").mkdir(parents=True)
    layout = oci.Layout(result.layout)
    manifest = layout.json_blob(result.platforms[0].manifest_digest)
    with tarfile.open(layout.blob_path(manifest["layers"][0]["digest"])) as tar:
        tar.extractall(context / "rootfs", filter="fully_trusted")
    shutil.copy2(REPO / "dockerfiles" / "scheduler.Dockerfile", context / "Dockerfile")


def _measure_pushes(client, result, engine_image, work: Path, repeats: int) -> dict[str, list[float]]:
    """Our distribution-API push (cold, then warm) and `docker push`, each to a fresh registry."""
    times: dict[str, list[float]] = {"push_cold": [], "push_warm": [], "docker_push": []}
    for i in range(repeats):
        reg = Registry(work / f"reg-{i}").start()
        try:
            target = distribution.Target(reg.host, "bench/kube-scheduler")
            for key in ("push_cold", "push_warm"):
                start = time.monotonic()
                registry.push(result.layout, distribution.Client(target))
                times[key].append(time.monotonic() - start)
                record.run(key.replace("_", " "), "ours", times[key][-1])
        finally:
            reg.stop()
        reg = Registry(work / f"engine-reg-{i}").start()
        try:
            ref = f"{reg.host}/bench/kube-scheduler"
            engine_image.tag(ref, tag="bench")
            start = time.monotonic()
            for chunk in client.api.push(ref, tag="bench", stream=True, decode=True):
                # docker-py reports a failed push inside the stream, not as an exception.
                if "error" in chunk or "errorDetail" in chunk:
                    raise RuntimeError(f"docker push failed: {chunk.get('error')}")
            times["docker_push"].append(time.monotonic() - start)
            record.run("push cold", "docker push", times["docker_push"][-1])
            client.images.remove(f"{ref}:bench")
        finally:
            reg.stop()
    return times


def markdown(r: dict) -> str:
    s, b, p = r["size"], r["build_seconds"], r["push_seconds"]

    def ratio(a: float, base: float) -> str:
        return f"{base / a:.1f}x faster" if a and a < base else f"{a / base:.1f}x slower" if base else "-"

    lines = [
        f"kube-scheduler {r['k8s_version']} {r['platform']}, medians of {r['repeats']} runs",
        "",
        "| size | bytes |",
        "|---|---:|",
        f"| binary | {s['binary_bytes']:,} |",
        f"| image (uncompressed) | {s['image_bytes']:,} |",
        f"| overhead (image - binary) | {s['overhead_bytes']:,} ({s['overhead_bytes'] / 1024:.0f} KiB; goal <= 300 KB) |",
        f"| compressed layer | {s['compressed_layer_bytes']:,} |",
        "",
        "| step | ours (s) | baseline (s) | ratio |",
        "|---|---:|---:|---|",
        f"| image.build cold (no layout, no engine image) | {b['cold']:.2f} | {b['docker_build_baseline']:.2f} (`docker build`, no cache) | {ratio(b['cold'], b['docker_build_baseline'])} |",
        f"| image.build warm (identical inputs: skipped) | {b['warm']:.2f} | {b['docker_build_baseline']:.2f} | {ratio(b['warm'], b['docker_build_baseline'])} |",
        f"| image.build --force | {b['forced']:.2f} | {b['docker_build_baseline']:.2f} | {ratio(b['forced'], b['docker_build_baseline'])} |",
        f"| push to an empty local registry | {p['cold']:.2f} | {p['docker_push_baseline']:.2f} (`docker push`) | {ratio(p['cold'], p['docker_push_baseline'])} |",
        f"| push again (all blobs present) | {p['warm']:.2f} | - | - |",
        f"| build (cold) + push, end to end | {b['cold'] + p['cold']:.2f} | {b['docker_build_baseline'] + p['docker_push_baseline']:.2f} | {ratio(b['cold'] + p['cold'], b['docker_build_baseline'] + p['docker_push_baseline'])} |",
    ]
    return "\n".join(lines)
