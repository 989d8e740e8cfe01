"""The archive destination (`--to archive=FILE`): the whole OCI layout as one tar, and back.

`inv image.build --to archive=FILE` (or --oci-archive FILE) writes the layout (oci-layout, index.json,
every blob: images, both SBOMs, the provenance statements, image-info.json) as a
deterministic tar: sorted entries, mtime SOURCE_DATE_EPOCH, uid/gid 0, no
owner names; the same layout gives the same bytes. `inv image.push
--from-archive FILE` unpacks it into a temporary layout and pushes that, so the
digests are the ones the build made. Signatures are made at push time, on the
other side of the air gap, with the key kept there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from scheduler_build import owned
from scheduler_build.atomic import umask_mode
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.image.info import ImageInfo
from scheduler_build.progress import log, phase
from scheduler_build.publish.publisher import ImageArtifact


def _members(layout: Path) -> list[Path]:
    return sorted((p for p in layout.rglob("*") if p.is_file()), key=lambda p: p.relative_to(layout).as_posix())


def write(layout: Path, archive: Path, epoch: int) -> Path:
    """The layout as one tar at `archive` (written atomically)."""
    layout = Path(layout).resolve()
    if not (layout / "index.json").is_file():
        raise UserError(f"no built image under {layout}", "run `inv image.build` first")
    archive = Path(archive)
    archive.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=archive.parent, prefix=f".{archive.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
            for path in _members(layout):
                info = tarfile.TarInfo(path.relative_to(layout).as_posix())
                info.size, info.mtime, info.mode = path.stat().st_size, epoch, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with open(path, "rb") as handle:
                    tar.addfile(info, handle)
        os.chmod(tmp, umask_mode())  # mkstemp made it 0600: an archive for transfer follows the umask
        os.replace(tmp, archive)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return archive


@contextlib.contextmanager
def extracted(archive: Path) -> Iterator[Path]:
    """The archive unpacked into a temporary layout (removed afterwards); every blob's digest checked."""
    archive = Path(archive)
    if not archive.is_file():
        what = "a directory, not the archive file" if archive.is_dir() else "no such file"
        raise UserError(f"--from-archive {archive}: {what}", "write one with `inv image.build --oci-archive FILE`")
    directory = Path(tempfile.mkdtemp(prefix="scheduler-build-archive-"))
    try:
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(directory, filter="data")
        except (tarfile.TarError, OSError) as exc:
            # tarfile's "could not be opened" lists every compression it tried, one per line.
            reason = str(exc).strip().splitlines()[0].rstrip(":") if str(exc).strip() else type(exc).__name__
            raise UserError(f"--from-archive {archive} is not a readable tar ({reason})", "copy it again") from None
        layout = oci.Layout(directory)
        layout.read()  # one clear error if it holds no tagged index
        for blob in layout.blobs.iterdir() if layout.blobs.is_dir() else []:
            if oci.digest_of(blob.read_bytes()) != f"sha256:{blob.name}":
                raise UserError(f"--from-archive {archive}: blob {blob.name[:12]} does not match its digest", "copy it again")
        check_record(archive, layout)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_record(archive: Path, layout: oci.Layout) -> ImageInfo:
    """The archive's image-info.json is this version's record and names only what the archive holds:
    its index is a tagged index of the layout and every digest it lists is one of the layout's blobs."""
    info = ImageInfo.of_layout(layout.root)
    contents = layout.read()
    named = [("index_digest", info.index_digest)] + [
        (f"platforms[{i}].{name}", getattr(p, name)) for i, p in enumerate(info.platforms)
        for name in ("image_id", "manifest_digest", "layer_digest", "sbom_manifest_digest", "cyclonedx_manifest_digest",
                     "provenance_digest")]
    for where, digest in named:
        if not layout.blob_path(digest).is_file():
            raise UserError(f"--from-archive {archive}: image-info.json {where} {digest[:19]} is not in the archive",
                            "the record was altered or belongs to another image: write the archive again with "
                            "`inv image.build --oci-archive FILE`")
    listed = {m.get("digest") for m in contents.manifests}
    strays = [p.manifest_digest for p in info.platforms if p.manifest_digest not in listed]
    if info.index_digest != contents.index_digest or strays:
        raise UserError(f"--from-archive {archive}: image-info.json names index {info.index_digest[:19]} and images "
                        f"{', '.join(d[:19] for d in strays) or '(all listed)'}, the archive's tags point at "
                        f"{contents.index_digest[:19]}",
                        "write the archive again with `inv image.build --oci-archive FILE`")
    return info


@dataclass(frozen=True)
class Archived:
    path: Path

    @property
    def references(self) -> list[str]:
        return [str(self.path)]

    def as_dict(self) -> dict:
        return {"references": self.references}


@dataclass(frozen=True)
class ArchivePublisher:
    """Every member's mtime is the image's own date (its record's source_date_epoch): the tar is reproducible."""

    path: Path
    cache_dir: Path  # where the file's digest is recorded, so the next write finds it ours (owned.py)
    replacing: bool  # the file there was not one of ours and --force replaces it: said once it is done

    def publish(self, artifact: ImageArtifact) -> Archived:
        with phase("image.archive", str(self.path)):
            written = write(artifact.layout, self.path, artifact.info.source_date_epoch)
        owned.remember_file(written, self.cache_dir)
        if self.replacing:
            log(f"    replaced {written} (--force: it was not an archive scheduler-build wrote)", always=True)
        return Archived(written)
