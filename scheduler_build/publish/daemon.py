"""The daemon destination (`--to daemon`): have the local engine hold a built image (`docker load`).

Each platform's image goes in as a Docker archive holding the layout's own
config and layer bytes, so the engine's image ID is the config digest and
identical inputs give the identical ID. Reads the layout through image/oci.py
only; the assembler's result says which tags each platform gets.

A fresh build is loaded while it is assembled instead (Preloader): the engine
needs the config and the uncompressed layer, not the layout, so the assembler
hands over each config as soon as the layer's diff_id is known, and the archive
is streamed to `docker load` from the layer's entries while the layer is
compressed for the layout. Loading is ~1 s of engine work for the 73 MB binary
and compressing ~1 s of ours: done side by side instead of one after the other.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterator

from scheduler_build.engine import Engine, connect
from scheduler_build.errors import UserError
from scheduler_build.image import layer, oci
from scheduler_build.progress import log, phase

from scheduler_build.publish.publisher import ImageArtifact

if TYPE_CHECKING:  # the early image's type only: publishing never assembles
    from scheduler_build.image.assemble import EarlyImage
    from scheduler_build.image.info import PlatformEntry

CHUNK = 1 << 20


def engine_has(engine: Engine, refs_to_ids: dict[str, str]) -> bool:
    for ref, image_id in refs_to_ids.items():
        image = engine.inspect_image(ref)
        if image is None or image.id != image_id:
            return False
    return True


def hold(artifact: ImageArtifact, engine: Engine | None = None, preloaded: frozenset[str] = frozenset()) -> bool:
    """Make the engine hold every platform's image under its local tags; returns whether it loaded any.

    A platform a Preloader loaded while the image was assembled (`preloaded`) is not loaded again; any other is
    loaded unless the engine already holds its config digest (= its image ID) under every local tag, as it does
    after an earlier load of the same layout: same ID, same bytes.
    """
    engine = engine or connect()
    loaded = False
    for p in artifact.info.platforms:
        if p.platform in preloaded or engine_has(engine, {ref: p.config_digest for ref in p.local_tags}):
            continue
        log(f"    the engine lacks the {p.platform} image: loading it")
        load(engine, oci.Layout(artifact.layout), p)
        loaded = True
    return loaded


def docker_archive(layout: oci.Layout, manifest_digest: str, repo_tags: list[str], out) -> None:
    """Write `docker load`'s archive format for one image manifest of the layout to `out`."""
    manifest = layout.json_blob(manifest_digest)
    config_digest = manifest["config"]["digest"]
    layer_digest = manifest["layers"][0]["digest"]
    config_name = config_digest.split(":", 1)[1] + ".json"
    layer_name = layer_digest.split(":", 1)[1] + ".tar.gz"
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, path in ((config_name, layout.existing_blob(config_digest)), (layer_name, layout.existing_blob(layer_digest))):
            ti = tarfile.TarInfo(name)
            ti.size = path.stat().st_size
            with open(path, "rb") as handle:
                tar.addfile(ti, handle)
        data = json.dumps([{"Config": config_name, "RepoTags": repo_tags, "Layers": [layer_name]}]).encode()
        ti = tarfile.TarInfo("manifest.json")
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))


def load(engine: Engine, layout: oci.Layout | Path, image: PlatformEntry) -> None:
    """`docker load` one platform's image with the layout's bytes; check the engine kept its ID."""
    layout = layout if isinstance(layout, oci.Layout) else oci.Layout(layout)
    with phase("image.load", f"{image.platform} as {', '.join(image.local_tags)}"):
        with tempfile.TemporaryFile() as buffer:
            docker_archive(layout, image.manifest_digest, image.local_tags, buffer)
            buffer.seek(0)
            ids = engine.load(buffer, f"the {image.platform} image")
        if image.config_digest not in ids:
            raise UserError(f"docker load produced {sorted(ids)}, expected {image.config_digest}", "the engine rewrote the image config; please report this")


def _member(out: BinaryIO, name: str, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size = size
    out.write(info.tobuf(format=tarfile.USTAR_FORMAT))


def _pad(out: BinaryIO, size: int) -> None:
    out.write(b"\0" * (-size % tarfile.BLOCKSIZE))


def streamed_archive(out: BinaryIO, image: EarlyImage) -> None:
    """`docker load`'s archive for an image not yet in a layout: the layer tar written from its
    entries (the same deterministic bytes as the layout's, which the engine checks against the
    config's diff_id), then the config, then manifest.json (the engine reads it last)."""
    _member(out, "layer.tar", image.layer_size)
    counted = layer.HashingWriter(out)
    layer.write_layer(counted, image.entries, image.epoch)
    if counted.size != image.layer_size:
        raise UserError(f"the {image.platform} layer changed while it was loaded", "run the command again")
    _pad(out, counted.size)
    config_name = image.config_digest.split(":", 1)[1] + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": image.local_tags, "Layers": ["layer.tar"]}]).encode()
    for name, data in ((config_name, image.config), ("manifest.json", manifest)):
        _member(out, name, len(data))
        out.write(data)
        _pad(out, len(data))
    out.write(b"\0" * (2 * tarfile.BLOCKSIZE))


def _chunks(image: EarlyImage) -> Iterator[bytes]:
    """The streamed archive as chunks for the engine's request body (a pipe fed by a writer thread)."""
    read_fd, write_fd = os.pipe()
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            with open(write_fd, "wb", buffering=CHUNK) as out:
                streamed_archive(out, image)
        except BaseException as exc:  # reported by the reader below; a closed reader ends it too
            errors.append(exc)

    writer = threading.Thread(target=produce, name=f"archive-{image.platform}", daemon=True)
    writer.start()
    with open(read_fd, "rb", buffering=0) as source:
        while chunk := source.read(CHUNK):
            yield chunk
    writer.join()
    if errors:
        raise errors[0]


class Preloader:
    """`early` callback of assemble.build: loads each platform's image into the engine in a
    thread while the assembler compresses that platform's layer. Use as a context manager;
    `loaded` then names the platforms the engine holds (DaemonPublisher does not load them again)."""

    def __init__(self, engine: Engine | None = None):
        self.engine = engine
        self.loaded: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []

    def __call__(self, image: EarlyImage) -> None:
        self.engine = self.engine or connect()
        thread = threading.Thread(target=self._load, args=(image,), name=f"load-{image.platform}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _load(self, image: EarlyImage) -> None:
        start = time.monotonic()
        try:
            ids = self.engine.load(_chunks(image), f"the {image.platform} image")
            if image.config_digest not in ids:
                raise UserError(f"docker load produced {sorted(ids)}, expected {image.config_digest}",
                                "the engine rewrote the image config; please report this")
        except BaseException as exc:  # raised in the caller's thread by __exit__
            self._errors.append(exc)
            return
        self.loaded.add(image.platform)
        log(f"    loaded {image.platform} as {', '.join(image.local_tags)} beside the compression ({time.monotonic() - start:.1f}s)")

    def __enter__(self) -> "Preloader":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for thread in self._threads:
            thread.join()
        if exc_type is None and self._errors:
            raise self._errors[0]


@dataclass(frozen=True)
class Loaded:
    references: list[str]  # the local tags the engine holds
    loaded: bool  # False: the engine held them already

    def as_dict(self) -> dict:
        return {"references": self.references, "loaded": self.loaded}


@dataclass(frozen=True)
class DaemonPublisher:
    """The daemon destination. `early` is its Preloader: a conductor hands it to the assembler (publish/multi.py's
    `assembling`), so a fresh image is loaded while its layer is compressed and `publish` only loads the rest."""

    engine: Engine | None = None  # None: connect when it first loads (the only destination that needs an engine)
    early: Preloader = field(default_factory=Preloader)

    def publish(self, artifact: ImageArtifact) -> Loaded:
        loaded = hold(artifact, self.engine or self.early.engine, frozenset(self.early.loaded))
        return Loaded(sorted({tag for p in artifact.info.platforms for tag in p.local_tags}), loaded)
