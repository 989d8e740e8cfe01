"""Publish a built image layout into the local engine (`docker load`).

Each platform's image goes in as a Docker archive holding the layout's own
config and layer bytes, so the engine's image ID is the config digest and
identical inputs give the identical ID. Reads the layout through image/oci.py
only; the assembler's result says which tags each platform gets.
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from scheduler_build import engine as docker_api
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.progress import log, phase

if TYPE_CHECKING:  # the result type only: publishing never assembles
    from scheduler_build.image.assemble import ImageResult, PlatformImage


def engine_has(engine: docker_api.Engine, refs_to_ids: dict[str, str]) -> bool:
    for ref, image_id in refs_to_ids.items():
        image = engine.inspect_image(ref)
        if image is None or image.id != image_id:
            return False
    return True


def publish(result: ImageResult, engine: docker_api.Engine | None = None) -> bool:
    """Make the engine hold every platform's image under its local tags; returns whether it loaded any.

    A freshly assembled layout is always loaded; a reused one only when the engine lacks it.
    """
    engine = engine or docker_api.connect()
    if result.skipped:
        expected = {ref: p.config_digest for p in result.platforms for ref in p.local_tags}
        if engine_has(engine, expected):
            return False
        log("    the layout is current but the engine lacks its images: loading them again")
    for p in result.platforms:
        load(engine, oci.Layout(result.layout), p)
    return True


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


def load(engine: docker_api.Engine, layout: oci.Layout | Path, image: PlatformImage) -> None:
    """`docker load` one platform's image with the layout's bytes; check the engine kept its ID."""
    layout = layout if isinstance(layout, oci.Layout) else oci.Layout(layout)
    with phase("image.load", f"{image.platform} as {', '.join(image.local_tags)}"):
        with tempfile.TemporaryFile() as buffer:
            docker_archive(layout, image.manifest_digest, image.local_tags, buffer)
            buffer.seek(0)
            ids = engine.load(buffer, f"the {image.platform} image")
        if image.config_digest not in ids:
            raise UserError(f"docker load produced {sorted(ids)}, expected {image.config_digest}", "the engine rewrote the image config; please report this")
