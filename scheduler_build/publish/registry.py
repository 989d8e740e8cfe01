"""`inv image.push`: push an OCI layout to a registry over the distribution API.

Why not `docker push`: the engine (20.10) cannot push an OCI image index, and it
re-compresses layers itself, so the pushed digests would not be the ones our
reproducible layout records. We push the layout's exact bytes instead: blobs
first, then each platform's manifest and its SBOM artifact by digest, and the
tags last, so a tag never names an image whose parts are missing. Every manifest
is read back and its digest compared.

The connection (authentication, TLS, retries) is publish/distribution.py's Client; this module is the
registry destination: the push and its publisher (publish/publisher.py), which signs after the push when asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from scheduler_build.image import oci
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase
from scheduler_build.publish.distribution import Client, merged_referrers, referrers_tag
from scheduler_build.publish.publisher import ImageArtifact

@dataclass
class PushResult:
    references: list[str]  # repo@sha256:... : the index first, then each platform image
    index_digest: str
    sbom_references: list[str]
    tags: list[str]
    uploaded_bytes: int = 0
    signed: list[str] = field(default_factory=list)  # repo@sha256:... signed by `image.push --sign`

    def as_dict(self) -> dict:
        return {"references": self.references, "index_digest": self.index_digest, "sbom_references": self.sbom_references,
                "tags": self.tags, "uploaded_bytes": self.uploaded_bytes, "signed": self.signed}


def _push_blobs(client: Client, layout: oci.Layout, manifest: dict) -> int:
    """The config and layers a manifest names; returns the bytes uploaded (skipping what the registry has)."""
    uploaded = 0
    for desc in [manifest["config"], *manifest["layers"]]:
        if client.push_blob(layout.existing_blob(desc["digest"]), desc["digest"]):
            uploaded += desc["size"]
    return uploaded


def _push_referrer(client: Client, layout: oci.Layout, referrer: oci.Referrer) -> int:
    """An artifact (the SBOM) by digest, and the tag-schema referrers index of its subject."""
    artifact_bytes = layout.blob(referrer.digest)
    uploaded = _push_blobs(client, layout, json.loads(artifact_bytes))
    client.put_manifest(referrer.digest, artifact_bytes, oci.MANIFEST)
    # Registries without the OCI 1.1 referrers API find an image's referrers
    # through an index tagged sha256-<subject hex>.
    ours = {"mediaType": oci.MANIFEST, "digest": referrer.digest, "size": len(artifact_bytes), "artifactType": referrer.artifact_type}
    client.put_manifest(referrers_tag(referrer.subject), merged_referrers(client, referrer.subject, ours), oci.INDEX)
    return uploaded


def _verify(client: Client, contents: oci.Contents) -> None:
    """Read every tag and image manifest back and compare digests."""
    repo = client.target.name
    for tag in contents.tags:
        body, _ = client.get_manifest(tag, [oci.INDEX])
        if oci.digest_of(body) != contents.index_digest:
            raise UserError(f"{repo}:{tag} reads back as {oci.digest_of(body)}, expected {contents.index_digest}")
    for desc in contents.manifests:
        body, _ = client.get_manifest(desc["digest"], [oci.MANIFEST])
        if oci.digest_of(body) != desc["digest"]:
            raise UserError(f"{repo}@{desc['digest']} reads back with a different digest")
    log(f"    verified {len(contents.tags)} tag(s) and {len(contents.manifests)} image(s) by digest")


def push(layout_dir: Path, client: Client) -> PushResult:
    """Push an OCI layout (as image.build writes it): blobs, images and their referrers by digest,
    the index, then the tags; verify every manifest by digest."""
    layout = oci.Layout(layout_dir)
    contents = layout.read()
    client.connect()
    repo = client.target.name
    uploaded = 0
    references, sbom_refs = [], []
    for desc in contents.manifests:
        manifest_bytes = layout.blob(desc["digest"])
        manifest = json.loads(manifest_bytes)
        plat = desc.get("platform") or {}
        log(f"    {plat.get('os', '?')}/{plat.get('architecture', '?')}: {len(manifest['layers'])} layer(s) and config")
        uploaded += _push_blobs(client, layout, manifest)
        client.put_manifest(desc["digest"], manifest_bytes, oci.MANIFEST)
        references.append(f"{repo}@{desc['digest']}")
        for referrer in contents.referrers_of(desc["digest"]):
            uploaded += _push_referrer(client, layout, referrer)
            sbom_refs.append(f"{repo}@{referrer.digest}")

    index_bytes = layout.blob(contents.index_digest)
    # The index by digest, then the tags: nothing is tagged before all of it is there.
    client.put_manifest(contents.index_digest, index_bytes, oci.INDEX)
    for tag in contents.tags:
        client.put_manifest(tag, index_bytes, oci.INDEX)
    _verify(client, contents)
    return PushResult([f"{repo}@{contents.index_digest}", *references], contents.index_digest, sbom_refs, contents.tags, uploaded)




Signer = Callable[[Path, Client], list[str]]  # (layout, client) -> what was signed


@dataclass(frozen=True)
class RegistryPublisher:
    """The registry destination (`--to registry`): push the layout's exact bytes, then sign when asked."""

    client: Client
    sign: Signer | None  # None: push only

    def publish(self, artifact: ImageArtifact) -> PushResult:
        target = self.client.target
        with phase("image.push", target.name):
            pushed = push(artifact.layout, self.client)
        if self.sign is not None:
            with phase("image.sign", target.name):
                pushed.signed = self.sign(artifact.layout, self.client)
        return pushed
