"""image-info.json: the contract between the image stage and everything that ships its layout.

The image stage writes it once, from one `ImageInfo`; publish (sign, archive,
`image.push --from-archive`), `cluster.load` and `--json` read it back through
`ImageInfo.from_file`, so a key is named in one place. An archive from another
machine is a trust boundary: a foreign, old or tampered file is one UserError
with the fix, never a KeyError deep in a publisher.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_build.build.info import JsonRecord
from scheduler_build.errors import UserError

FILE_NAME = "image-info.json"
SCHEMA = 1
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
REBUILD = "rebuild the layout with `inv image.build --force` (or write the archive again with --oci-archive)"


@dataclass
class PlatformEntry:
    """One platform's image in the layout: its manifest, config (= the engine's image ID), layer and SBOM artifacts."""

    platform: str  # linux/amd64
    arch: str
    image_id: str  # the config digest
    manifest_digest: str
    manifest_size: int
    layer_digest: str
    layer_size: int
    binary_size: int
    sbom: str  # the SPDX file beside the binary
    sbom_sha256: str
    sbom_manifest_digest: str
    sbom_manifest_size: int
    cyclonedx: str
    cyclonedx_manifest_digest: str
    cyclonedx_manifest_size: int
    provenance_digest: str  # the SLSA statement's blob
    local_tags: list[str] = field(default_factory=list)  # the engine's tags for it (publish/daemon.py)

    @property
    def config_digest(self) -> str:
        return self.image_id

    @property
    def local_tag(self) -> str:
        return self.local_tags[0]

    @property
    def sbom_path(self) -> Path:
        return Path(self.sbom)


@dataclass
class ImageInfo(JsonRecord):
    name: str
    repository: str
    kubernetes_version: str
    tags: list[str]
    inputs_key: str
    source_date_epoch: int
    index_digest: str
    index_size: int
    platforms: list[PlatformEntry] = field(default_factory=list)
    schema: int = SCHEMA
    FILE_NAME = FILE_NAME  # not a field: no annotation

    def provenance(self) -> dict[str, str]:
        """Each platform image's manifest digest -> its provenance statement's blob digest."""
        return {p.manifest_digest: p.provenance_digest for p in self.platforms}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageInfo:
        """The record as written by `to_dict`; KeyError/TypeError/ValueError on anything else."""
        platforms = [PlatformEntry(**p) for p in data["platforms"]]
        plain = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name != "platforms"}
        info = cls(**plain, platforms=platforms)
        info.check()
        return info

    def check(self) -> None:
        """The digests a publisher trusts are digests: a tampered value fails here, not on the wire."""
        digests = [("index_digest", self.index_digest)]
        for i, p in enumerate(self.platforms):
            digests += [(f"platforms[{i}].{name}", getattr(p, name)) for name in
                        ("image_id", "manifest_digest", "layer_digest", "sbom_manifest_digest",
                         "cyclonedx_manifest_digest", "provenance_digest")]
        for where, value in digests:
            if not isinstance(value, str) or not _DIGEST.match(value):
                raise ValueError(f"{where} is not a sha256 digest: {str(value)[:80]!r}")
        if not self.platforms:
            raise ValueError("it lists no platform")

    @classmethod
    def from_file(cls, path: Path) -> ImageInfo:
        """Read a layout's record; a missing, unreadable, foreign, old or tampered file is one clear UserError."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{path} is unreadable: {exc}", REBUILD) from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise UserError(f"{path} is not a schema-{SCHEMA} image record (schema: {found!r})", REBUILD)
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path} does not match this version's image record ({exc})", REBUILD) from None

    @classmethod
    def of_layout(cls, layout: Path) -> ImageInfo:
        return cls.from_file(Path(layout) / FILE_NAME)

    @classmethod
    def previous(cls, layout: Path) -> ImageInfo | None:
        """The record of an earlier build of this layout, or None when absent or not readable as one."""
        try:
            return cls.of_layout(layout)
        except UserError:
            return None
