"""`cluster.load`: put built images into the node's containerd, like `kind load`.

A reference names an image of the local Docker engine (`docker save` streamed
into `ctr images import`, nothing written to disk), or a path: an OCI layout
directory (as `inv image.build` writes) or an OCI/docker archive. An image is
imported under the name the manifests use (`--as`-style retagging for the
extender, whose built tag differs from the spec's `referenceExtender.image`).
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

from scheduler_build.cluster import containerd
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.image.info import FILE_NAME as INFO_FILE, ImageInfo
from scheduler_build.progress import log


def normalize(ref: str) -> str:
    """containerd's full name for a Docker-style reference (docker.io/library/... for short names)."""
    first = ref.split("/", 1)[0]
    if "/" not in ref:
        ref = f"docker.io/library/{ref}"
    elif "." not in first and ":" not in first and first != "localhost":
        ref = f"docker.io/{ref}"
    return ref if ":" in ref.rsplit("/", 1)[-1] or "@" in ref else f"{ref}:latest"


def _ctr_import(ctd_dir: Path, stdin) -> str:
    return containerd.ctr(ctd_dir, "images", "import", "-", stdin=stdin)


def _import_docker(ctd_dir: Path, ref: str) -> None:
    save = subprocess.Popen(["docker", "save", ref], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = subprocess.run(containerd.ctr_argv(ctd_dir, "images", "import", "-"), stdin=save.stdout,
                             capture_output=True, text=True, timeout=900)
    finally:
        assert save.stdout is not None
        save.stdout.close()
        err = save.stderr.read().decode(errors="replace").strip() if save.stderr else ""
        save.wait()
    if save.returncode != 0:
        raise UserError(f"image {ref} is not in the local Docker engine ({err.splitlines()[-1] if err else 'docker save failed'})",
                        "build it first (`inv image.build` / `inv image.extender`), or pass an OCI layout path")
    if out.returncode != 0:
        raise UserError(f"importing {ref} into the node failed: {out.stderr.strip()}", "is the node running? `inv cluster.status`")


def _layout_archive(path: Path, name: str, out) -> None:
    """An OCI archive of the layout whose index.json names only images (no SBOM referrers),
    each under its containerd name: `name` when given, else its ref.name annotation."""
    entries = json.loads((path / "index.json").read_text()).get("manifests") or []
    images_only = [dict(e) for e in entries if not e.get("artifactType")]
    if name:
        images_only = images_only[:1]
    for entry in images_only:
        annotations = dict(entry.get("annotations") or {})
        annotations["io.containerd.image.name"] = name or annotations.get(oci.REF_NAME, "")
        entry["annotations"] = annotations
    index = json.dumps({"schemaVersion": 2, "manifests": images_only}).encode()
    with tarfile.open(fileobj=out, mode="w") as archive:
        archive.add(path / "oci-layout", arcname="oci-layout")
        archive.add(path / "blobs", arcname="blobs")
        info = tarfile.TarInfo("index.json")
        info.size = len(index)
        archive.addfile(info, io.BytesIO(index))


def _import_path(ctd_dir: Path, path: Path, name: str) -> None:
    if path.is_dir():
        if not (path / "index.json").is_file():
            raise UserError(f"{path} is not an OCI layout (no index.json)", "pass a directory `inv image.build` wrote, or an image reference")
        if (path / INFO_FILE).is_file():
            ImageInfo.of_layout(path)  # an old, foreign or altered record is one clear error before the import
        with tempfile.TemporaryFile() as tmp:
            _layout_archive(path, name, tmp)
            tmp.seek(0)
            _ctr_import(ctd_dir, tmp)
        return
    with open(path, "rb") as stdin:
        _ctr_import(ctd_dir, stdin)


def images(ctd_dir: Path) -> set[str]:
    return set(containerd.ctr(ctd_dir, "images", "ls", "-q").split())


def load(ctd_dir: Path, ref: str, name: str = "") -> str:
    """Import one image; with `name`, also tag it so. Returns the name the node knows it by."""
    before = images(ctd_dir)
    if Path(ref).exists() and ("/" in ref or ref.endswith((".tar", ".oci"))):
        _import_path(ctd_dir, Path(ref), normalize(name) if name else "")
        imported = sorted(images(ctd_dir) - before)
        source = imported[0] if imported else ""
    else:
        _import_docker(ctd_dir, ref)
        source = normalize(ref)
    final = normalize(name) if name else source
    if name and source and source != final:
        containerd.ctr(ctd_dir, "images", "tag", "--force", source, final)
    if final and final not in images(ctd_dir):
        raise UserError(f"{ref} was imported but the node does not list {final}", "check `ctr images ls` on the node's socket")
    log(f"    loaded {ref} as {final or '(names from the archive)'}")
    return final
