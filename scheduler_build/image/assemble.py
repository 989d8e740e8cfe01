"""`inv image.build`: reproducible FROM-scratch images of the built scheduler.

Docker 20.10's classic builder stamps `created` (and history times) with the
wall clock, so a Dockerfile build never gives the same image ID twice. We
assemble the image ourselves instead, following dockerfiles/scheduler.Dockerfile
(the same file system, user, entrypoint and labels; an integration test builds
that Dockerfile through the engine and compares the two):

* one layer, written deterministically (layer.py);
* an OCI image config whose `created` is SOURCE_DATE_EPOCH;
* an OCI image layout under dist/<name>/<k8s-version>/image/ holding every
  platform's manifest, the OCI image index and, per platform, an SPDX and a
  CycloneDX SBOM as OCI artifacts whose `subject` is that platform's image
  manifest (oci.py), plus its SLSA provenance statement (provenance.py), which
  `inv image.push --sign` attests.

The layout is the result: loading it into the engine (publish/daemon.py) and
pushing it to a registry (publish/registry.py) are the publishers' business.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scheduler_build import __version__
from scheduler_build import owned
from scheduler_build import epoch as epoch_mod
from scheduler_build.atomic import staging_prefix, write_atomic
from scheduler_build.errors import UserError
from scheduler_build.image import cyclonedx, layer, oci, provenance, sbom
from scheduler_build.image.info import ImageInfo, PlatformEntry
from scheduler_build.image.request import LABEL_PREFIX, ImageRequest, PlatformInput, labels_for, patch_digest, tags_for
from scheduler_build.progress import log, phase

DOCKERFILE_NAME = "scheduler.Dockerfile"  # what the layer assembly reproduces (dockerfiles/)
# Bumped when the assembly changes, so an older image with the same inputs is rebuilt.
ASSEMBLY_VERSION = "5"  # 5: SBOMs with compiled versions, suppliers, pedigree; relative provenance URIs


@dataclass
class ImageResult:
    """The built (or reused) layout and its record (image/info.py)."""

    layout: Path
    info: ImageInfo
    skipped: bool = False

    @property
    def tags(self) -> list[str]:
        return self.info.tags

    @property
    def index_digest(self) -> str:
        return self.info.index_digest

    @property
    def platforms(self) -> list[PlatformEntry]:
        return self.info.platforms

    def as_dict(self) -> dict:
        """`image.build --json`: the layout, its tags and index, and per platform what a user looks up."""
        return {
            "layout": str(self.layout),
            "tags": self.tags,
            "index_digest": self.index_digest,
            "skipped": self.skipped,
            "platforms": [
                {
                    "platform": p.platform,
                    "image_id": p.image_id,
                    "manifest_digest": p.manifest_digest,
                    "layer_size": p.layer_size,
                    "binary_size": p.binary_size,
                    "sbom": p.sbom,
                    "sbom_manifest_digest": p.sbom_manifest_digest,
                    "local_tag": p.local_tag,
                }
                for p in self.platforms
            ],
        }


@dataclass
class EarlyImage:
    """One platform's image as soon as its config is known, before its layer is compressed:
    enough for the engine to load it (publish/daemon.Preloader) while the compression runs."""

    platform: str
    config: bytes
    config_digest: str
    entries: list[layer.Entry]
    epoch: int
    layer_size: int  # of the uncompressed tar
    local_tags: list[str]


# --- pure parts ---------------------------------------------------------------------------


def image_config(arch: str, diff_id: str, epoch: int, labels: dict[str, str], binary_name: str) -> bytes:
    created = epoch_mod.utc_stamp(epoch)
    config: dict[str, Any] = {
        "architecture": arch,
        "os": "linux",
        "created": created,
        "author": f"scheduler-build {__version__}",
        "config": {
            "User": f"{layer.UID}:{layer.GID}",
            "Entrypoint": [f"/{layer.BIN_DIR}/{binary_name}"],
            "Env": ["PATH=/usr/local/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
            "WorkingDir": "/",
            "Labels": dict(sorted(labels.items())),
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created, "created_by": f"scheduler-build image.build (dockerfiles/{DOCKERFILE_NAME}, assembly {ASSEMBLY_VERSION})"}],
    }
    if arch == "arm64":
        config["variant"] = "v8"
    return oci.canonical(config)


def inputs_key(req: ImageRequest, tags: list[str]) -> str:
    """Everything that determines the images, hashed: equal keys mean identical images."""
    ca = hashlib.sha256(layer.CA_BUNDLE.read_bytes()).hexdigest() if layer.CA_BUNDLE.is_file() else ""
    material = {
        "assembly": ASSEMBLY_VERSION,
        "tool": __version__,
        "tags": tags,
        "epoch": req.source_date_epoch,
        "ca": ca,
        "source": req.source,
        "revision": req.revision,
        "dirty": req.dirty,
        "licenses": req.licenses,
        "name": req.name,
        "spec": req.spec_sha256,
        "platforms": [i.platform for i in req.inputs],
        "binaries": [(i.platform, i.build_info.binary.sha256, patch_digest(i.build_info)) for i in req.inputs],
    }
    return hashlib.sha256(oci.canonical(material)).hexdigest()


def layout_dir(dist_dir: Path, name: str, k8s_version: str) -> Path:
    return Path(dist_dir).resolve() / name / k8s_version / "image"


def local_tags(repository: str, tags: list[str], arch: str, native: str) -> list[str]:
    # The engine holds one image per tag: the native platform gets the plain tags,
    # every platform also gets an arch-suffixed one (still SemVer-safe).
    out = [f"{repository}:{tags[0]}-{arch}"]
    if arch == native:
        out = [f"{repository}:{t}" for t in tags] + out
    return out


# --- one platform ---------------------------------------------------------------------------


def _write_sbom(req: ImageRequest, item: PlatformInput) -> tuple[bytes, Path, str, bytes, Path]:
    """The platform's SPDX and CycloneDX SBOMs from `go version -m`, written beside the binary:
    (SPDX bytes, SPDX path, go version, CycloneDX bytes, CycloneDX path)."""
    binary_name = item.binary.name
    with phase("image.sbom", f"{item.platform} from `go version -m`"):
        info = sbom.read_build_info(item.binary)
        args = (binary_name, item.build_info.binary.sha256, req.k8s_version, item.platform, info, req.source_date_epoch,
                req.sbom_inputs)
        doc = sbom.document(*args)
        sbom_bytes, cdx_bytes = sbom.dumps(doc), cyclonedx.dumps(cyclonedx.document(*args))
        sbom_path = item.binary.parent / f"{binary_name}.spdx.json"
        cdx_path = item.binary.parent / f"{binary_name}.cdx.json"
        write_atomic(sbom_path, sbom_bytes)
        write_atomic(cdx_path, cdx_bytes)
        log(f"    {len(doc['packages'])} packages -> {sbom_path} and {cdx_path.name}")
    return sbom_bytes, sbom_path, info.go_version, cdx_bytes, cdx_path


def _sbom_artifact(lay: oci.Layout, subject: dict, sbom_bytes: bytes, sbom_path: Path, created: str,
                   media_type: str = sbom.MEDIA_TYPE) -> bytes:
    """The SBOM as an OCI artifact whose subject is the platform's image (OCI 1.1 referrers;
    registries without the referrers API get the tag-schema fallback index at push time)."""
    lay.put(oci.EMPTY_JSON)
    sbom_digest = lay.put(sbom_bytes)
    artifact = oci.canonical({
        "schemaVersion": 2,
        "mediaType": oci.MANIFEST,
        "artifactType": media_type,
        "config": {"mediaType": oci.EMPTY, "digest": oci.digest_of(oci.EMPTY_JSON), "size": len(oci.EMPTY_JSON)},
        "layers": [{"mediaType": media_type, "digest": sbom_digest, "size": len(sbom_bytes),
                    "annotations": {"org.opencontainers.image.title": sbom_path.name}}],
        "subject": subject,
        "annotations": {oci.CREATED: created},
    })
    lay.put(artifact)
    return artifact


def _layer(lay: oci.Layout, staging: Path, req: ImageRequest, item: PlatformInput, labels: dict[str, str],
           engine_tags: list[str], early: Callable[[EarlyImage], None] | None) -> tuple[bytes, str, int]:
    """The platform's layer into the layout and its config: (config, layer digest, layer size).

    With `early`, the uncompressed layer is hashed first (cheap) so the config is known
    and handed over before the compression, the one slow step, starts."""
    epoch, binary_name = req.source_date_epoch, item.binary.name
    entries = layer.rootfs_entries(item.binary, binary_name)
    expected = None
    if early is not None:
        expected, plain_size = layer.plain_layer(entries, epoch)
        config = image_config(item.arch, expected, epoch, labels, binary_name)
        early(EarlyImage(item.platform, config, oci.digest_of(config), entries, epoch, plain_size, engine_tags))
    tmp_layer = staging / f".layer-{item.arch}.tar.gz"
    diff_id, layer_digest, layer_size = layer.write_compressed_layer(tmp_layer, entries, epoch)
    if expected is not None and diff_id != expected:
        raise UserError(f"{item.binary} changed while it was being packaged", "run the command again")
    lay.adopt(tmp_layer, layer_digest)
    return image_config(item.arch, diff_id, epoch, labels, binary_name), layer_digest, layer_size


def _assemble_platform(lay: oci.Layout, staging: Path, req: ImageRequest, item: PlatformInput, tags: list[str],
                       key: str, native_arch: str, early: Callable[[EarlyImage], None] | None = None) -> PlatformEntry:
    """One platform's layer, config, manifest and SBOM artifact; returns its image-info entry."""
    sbom_bytes, sbom_path, go_version, cdx_bytes, cdx_path = _write_sbom(req, item)
    sbom_sha = hashlib.sha256(sbom_bytes).hexdigest()
    binary_name = item.binary.name
    created = epoch_mod.utc_stamp(req.source_date_epoch)
    with phase("image.assemble", f"{item.platform}: {binary_name} on scratch"):
        labels = labels_for(req, item, go_version, sbom_sha, tags[0])
        labels[f"{LABEL_PREFIX}.inputs"] = key
        engine_tags = local_tags(req.repository, tags, item.arch, native_arch)
        config, layer_digest, layer_size = _layer(lay, staging, req, item, labels, engine_tags, early)
        manifest = oci.canonical({
            "schemaVersion": 2,
            "mediaType": oci.MANIFEST,
            "config": {"mediaType": oci.CONFIG, "digest": lay.put(config), "size": len(config)},
            "layers": [{"mediaType": oci.LAYER_GZIP, "digest": layer_digest, "size": layer_size}],
            "annotations": {oci.CREATED: created},
        })
        manifest_digest = lay.put(manifest)
        subject = oci.descriptor(oci.MANIFEST, manifest)
        artifact = _sbom_artifact(lay, subject, sbom_bytes, sbom_path, created)
        cdx_artifact = _sbom_artifact(lay, subject, cdx_bytes, cdx_path, created, cyclonedx.MEDIA_TYPE)
        statement = _provenance(req, item, manifest_digest)
        log(f"    image {oci.digest_of(config)[:19]}, layer {layer_size} bytes (binary {item.binary.stat().st_size})")
    return PlatformEntry(
        platform=item.platform, arch=item.arch, image_id=oci.digest_of(config), manifest_digest=manifest_digest,
        manifest_size=len(manifest), layer_digest=layer_digest, layer_size=layer_size,
        binary_size=item.binary.stat().st_size, sbom=str(sbom_path), sbom_sha256=sbom_sha,
        sbom_manifest_digest=oci.digest_of(artifact), sbom_manifest_size=len(artifact), cyclonedx=str(cdx_path),
        cyclonedx_manifest_digest=oci.digest_of(cdx_artifact), cyclonedx_manifest_size=len(cdx_artifact),
        provenance_digest=lay.put(statement), local_tags=engine_tags,
    )


def _provenance(req: ImageRequest, item: PlatformInput, manifest_digest: str) -> bytes:
    """The platform image's SLSA provenance statement (canonical JSON), kept in the layout's blobs."""
    # The go.sum hash of k8s.io/kubernetes comes from the build's record: no Go, no network here.
    pred = provenance.predicate(item.build_info, platforms=[i.platform for i in req.inputs], spec_sha256=req.spec_sha256,
                                source=req.source, revision=req.revision, epoch=req.source_date_epoch,
                                spec_dir=req.spec_dir, patch_uris={p.file: p.uri for p in req.sbom_inputs.patches if p.uri})
    return provenance.dumps(provenance.statement(req.repository, manifest_digest, pred))


# --- the build ---------------------------------------------------------------------------


def _write_index(lay: oci.Layout, req: ImageRequest, tags: list[str], platforms_info: list[PlatformEntry]) -> bytes:
    """The image index (every platform) and the layout's index.json (the tags, the SBOMs)."""
    index = oci.canonical({
        "schemaVersion": 2,
        "mediaType": oci.INDEX,
        "manifests": [{"mediaType": oci.MANIFEST, "digest": p.manifest_digest, "size": p.manifest_size,
                       "platform": oci.platform_dict(p.arch)} for p in platforms_info],
        "annotations": {oci.CREATED: epoch_mod.utc_stamp(req.source_date_epoch),
                        "org.opencontainers.image.version": tags[0]},
    })
    index_digest = lay.put(index)
    lay.write_index(
        [{"mediaType": oci.INDEX, "digest": index_digest, "size": len(index), "annotations": {oci.REF_NAME: tag}} for tag in tags]
        + [{"mediaType": oci.MANIFEST, "digest": p.sbom_manifest_digest, "size": p.sbom_manifest_size,
            "artifactType": sbom.MEDIA_TYPE} for p in platforms_info]
        + [{"mediaType": oci.MANIFEST, "digest": p.cyclonedx_manifest_digest, "size": p.cyclonedx_manifest_size,
            "artifactType": cyclonedx.MEDIA_TYPE} for p in platforms_info]
    )
    return index


def build(req: ImageRequest, native_arch: str, early: Callable[[EarlyImage], None] | None = None) -> ImageResult:
    """Assemble (or reuse, when its inputs are unchanged) the layout: images, SBOMs and index.

    `early` is called with each platform's EarlyImage as soon as its config is known
    (not for a reused layout)."""
    tags = tags_for(req.k8s_version, req.spec_version, req.revision[:7] if req.revision else "", req.dirty, req.base_tag)
    layout = layout_dir(req.dist_dir, req.name, req.k8s_version)
    key = inputs_key(req, tags)
    previous = ImageInfo.previous(layout)
    if previous is not None and previous.inputs_key == key and not req.force:
        log(f"    {req.repository}:{tags[0]} is up to date (same inputs); --force rebuilds")
        return ImageResult(layout, previous, skipped=True)

    layout.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(layout.name), dir=layout.parent))  # pid: for clean
    try:
        lay = oci.Layout(staging)
        platforms_info = [_assemble_platform(lay, staging, req, item, tags, key, native_arch, early) for item in req.inputs]
        index = _write_index(lay, req, tags, platforms_info)
        image_info = ImageInfo(
            name=req.name, repository=req.repository, kubernetes_version=req.k8s_version, tags=tags, inputs_key=key,
            source_date_epoch=req.source_date_epoch, index_digest=oci.digest_of(index), index_size=len(index),
            platforms=platforms_info,
        )
        image_info.write(staging)
        owned.publish_dir(staging, layout, key[:16])
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return ImageResult(layout, image_info)
