"""OCI image layouts, pure: media types, canonical JSON, digests, reading and writing a layout.

No engine, no registry: the assembler writes layouts through `Layout`, the
publishers (publish/registry.py, publish/daemon.py) read them through
`Layout.read` and `Layout.blob`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.errors import UserError

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_JSON = b"{}"
REF_NAME = "org.opencontainers.image.ref.name"
CREATED = "org.opencontainers.image.created"
LAYOUT_FILE = '{"imageLayoutVersion":"1.0.0"}'


def canonical(obj: Any) -> bytes:
    """The one JSON encoding of manifests and configs: sorted keys, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type: str, data: bytes, **extra: Any) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": digest_of(data), "size": len(data), **extra}


def platform_dict(arch: str, os_name: str = "linux") -> dict[str, str]:
    out = {"architecture": arch, "os": os_name}
    if arch == "arm64":
        out["variant"] = "v8"
    return out


@dataclass
class Referrer:
    """An artifact manifest (an SBOM, a signature) whose `subject` is an image manifest."""

    digest: str
    size: int
    artifact_type: str
    subject: str


@dataclass
class Contents:
    """What a layout's index.json names: one image index under its tags, and referrers."""

    index_digest: str
    tags: list[str]
    manifests: list[dict[str, Any]]  # the image index's platform descriptors, in order
    referrers: list[Referrer]

    def referrers_of(self, manifest_digest: str) -> list[Referrer]:
        return [r for r in self.referrers if r.subject == manifest_digest]


class Layout:
    """An OCI image layout directory (oci-layout, index.json, blobs/sha256/<hex>)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.blobs = self.root / "blobs" / "sha256"

    # --- writing

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        path = self.blob_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return digest

    def adopt(self, file: Path, digest: str) -> None:
        """Move an already-hashed file (a layer written in place) into the blobs."""
        target = self.blob_path(digest)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.replace(file, target)

    def write_index(self, manifests: list[dict[str, Any]]) -> None:
        (self.root / "oci-layout").write_text(LAYOUT_FILE)
        layout_index = {"schemaVersion": 2, "mediaType": INDEX, "manifests": manifests}
        (self.root / "index.json").write_text(json.dumps(layout_index, indent=2, sort_keys=True) + "\n")

    # --- reading

    def blob_path(self, digest: str) -> Path:
        return self.blobs / digest.split(":", 1)[1]

    def existing_blob(self, digest: str) -> Path:
        """The blob's file; a layout missing it is one clear UserError."""
        path = self.blob_path(digest)
        if not path.is_file():
            raise UserError(f"{self.root} is missing blob {digest}", "rebuild with `inv image.build --force`")
        return path

    def blob(self, digest: str) -> bytes:
        return self.existing_blob(digest).read_bytes()

    def json_blob(self, digest: str) -> dict[str, Any]:
        return json.loads(self.blob(digest))

    def read(self) -> Contents:
        """The tagged image index and the referrers that index.json lists."""
        try:
            entries = json.loads((self.root / "index.json").read_text())["manifests"]
        except (OSError, ValueError, KeyError, TypeError):
            raise UserError(f"no built image under {self.root}", "run `inv image.build` first") from None
        tagged = [e for e in entries if e.get("mediaType") == INDEX and (e.get("annotations") or {}).get(REF_NAME)]
        if not tagged or len({e["digest"] for e in tagged}) != 1:
            raise UserError(f"{self.root}/index.json does not name one tagged image index", "rebuild with `inv image.build --force`")
        index_digest = tagged[0]["digest"]
        referrers = []
        for entry in entries:
            if entry.get("mediaType") == MANIFEST and entry.get("artifactType"):
                subject = (self.json_blob(entry["digest"]).get("subject") or {}).get("digest", "")
                referrers.append(Referrer(entry["digest"], entry["size"], entry["artifactType"], subject))
        return Contents(
            index_digest=index_digest,
            tags=[e["annotations"][REF_NAME] for e in tagged],
            manifests=list(self.json_blob(index_digest).get("manifests") or []),
            referrers=referrers,
        )
