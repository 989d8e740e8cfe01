"""`inv image.build`: reproducible FROM-scratch images of the built scheduler.

Docker 20.10's classic builder stamps `created` (and history times) with the
wall clock, so a Dockerfile build never gives the same image ID twice. We
assemble the image ourselves instead, following dockerfiles/scheduler.Dockerfile
(the same file system, user, entrypoint and labels; an integration test builds
that Dockerfile through the engine and compares the two):

* one layer, a tar written deterministically (sorted entries, USTAR, uid/gid 0,
  every mtime = SOURCE_DATE_EPOCH) and gzip-compressed with mtime 0;
* an OCI image config whose `created` is SOURCE_DATE_EPOCH;
* an OCI image layout under dist/<name>/<k8s-version>/image/ holding every
  platform's manifest, the OCI image index and, per platform, an SPDX SBOM as an
  OCI artifact whose `subject` is that platform's image manifest;
* each platform's image loaded into the engine with `docker load` (a Docker
  archive with the same config bytes, so the engine's image ID is the config
  digest and identical inputs give the identical ID).
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_build import __version__
from scheduler_build import engine as docker_api
from scheduler_build.image import sbom
from scheduler_build.errors import UserError
from scheduler_build.atomic import publish_dir, write_atomic
from scheduler_build.progress import log, phase

CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
DOCKERFILE_NAME = "scheduler.Dockerfile"  # what the layer assembly reproduces (dockerfiles/)
UID = GID = 65532
BIN_DIR = "usr/local/bin"

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_JSON = b"{}"
LABEL_PREFIX = "org.scheduler-build"
# Bumped when the assembly changes, so an older image with the same inputs is rebuilt.
ASSEMBLY_VERSION = "2"

_TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_SEMVER_IDENT = re.compile(r"^[0-9A-Za-z-]+$")


@dataclass
class PlatformInput:
    platform: str  # linux/amd64
    arch: str
    binary: Path
    build_info: dict


@dataclass
class ImageRequest:
    name: str
    k8s_version: str  # resolved, e.g. v1.36.3
    spec_version: str
    repository: str  # local repository, e.g. scheduler-build/kube-scheduler
    inputs: list[PlatformInput]
    source_date_epoch: int
    dist_dir: Path
    source: str = ""
    revision: str = ""
    dirty: bool = False
    licenses: str = "Apache-2.0"
    force: bool = False
    load: bool = True
    base_tag: str = ""  # the spec's image.tag; empty: <k8s-version>-<spec-version>


@dataclass
class PlatformImage:
    platform: str
    arch: str
    config_digest: str  # = the engine's image ID
    manifest_digest: str
    manifest_size: int
    layer_size: int
    binary_size: int
    sbom_path: Path
    sbom_manifest_digest: str
    local_tag: str


@dataclass
class ImageResult:
    layout: Path
    tags: list[str]
    index_digest: str
    platforms: list[PlatformImage] = field(default_factory=list)
    skipped: bool = False

    def as_dict(self) -> dict:
        return {
            "layout": str(self.layout),
            "tags": self.tags,
            "index_digest": self.index_digest,
            "skipped": self.skipped,
            "platforms": [
                {
                    "platform": p.platform,
                    "image_id": p.config_digest,
                    "manifest_digest": p.manifest_digest,
                    "layer_size": p.layer_size,
                    "binary_size": p.binary_size,
                    "sbom": str(p.sbom_path),
                    "sbom_manifest_digest": p.sbom_manifest_digest,
                    "local_tag": p.local_tag,
                }
                for p in self.platforms
            ],
        }


# --- tags, labels, git -------------------------------------------------------------


def parse_platforms(text: str) -> list[tuple[str, str]]:
    """'linux/amd64,linux/arm64' -> [('linux/amd64', 'amd64'), ...]."""
    result = []
    for item in [p.strip() for p in str(text).split(",") if p.strip()]:
        parts = item.split("/")
        if len(parts) not in (2, 3) or parts[0] != "linux" or not parts[1]:
            raise UserError(f"--platforms: {item!r} is not a linux/<arch> platform", "e.g. --platforms linux/amd64,linux/arm64")
        if parts[1] not in ("amd64", "arm64", "ppc64le", "s390x", "riscv64"):
            raise UserError(f"--platforms: unsupported architecture {parts[1]!r} in {item!r}", "supported: amd64, arm64, ppc64le, s390x, riscv64")
        if (f"linux/{parts[1]}", parts[1]) not in result:
            result.append((f"linux/{parts[1]}", parts[1]))
    if not result:
        raise UserError("--platforms is empty", "e.g. --platforms linux/amd64,linux/arm64")
    return result


def check_spec_version(version: str) -> str:
    """A SemVer-safe version for tags: dot-separated [0-9A-Za-z-], no '+', no leading zeros."""
    version = str(version).strip().lstrip("v")
    if "+" in version:
        raise UserError(f"version {version!r} contains '+', which image tags cannot carry", "use a pre-release form, e.g. 1.2.0-acme.1")
    if not version or not all(_SEMVER_IDENT.match(part) for part in version.split(".")):
        raise UserError(f"version {version!r} is not dot-separated alphanumerics", "e.g. 0.1.0 or 1.2.0-rc.1")
    for part in version.split("-")[0].split("."):
        if part.isdigit() and len(part) > 1 and part.startswith("0"):
            raise UserError(f"version {version!r} has a numeric part with a leading zero ({part!r})", "SemVer forbids it, e.g. 1.2.0 not 1.02.0")
    return version


def tags_for(k8s_version: str, spec_version: str, short_sha: str, dirty: bool, base_tag: str = "") -> list[str]:
    """['v1.36.3-0.1.0', 'v1.36.3-0.1.0-gabc1234[-dirty]']: SemVer pre-release forms, no '+'."""
    if base_tag and "+" in base_tag:
        raise UserError(f"image.tag {base_tag!r} contains '+', which image tags cannot carry", "use a pre-release form, e.g. v1.36.3-acme.1")
    base = base_tag or f"{k8s_version}-{check_spec_version(spec_version)}"
    tags = [base]
    if short_sha:
        tags.append(f"{base}-g{short_sha}{'-dirty' if dirty else ''}")
    for tag in tags:
        if not _TAG_RE.match(tag):
            raise UserError(f"image tag {tag!r} is not a valid tag", "tags are [A-Za-z0-9_.-], at most 128 characters")
    return tags


def git_state(cwd: Path | None = None) -> tuple[str, str, bool, str]:
    """(full sha, short sha, dirty, origin URL without credentials); empty outside git."""

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    full = git("rev-parse", "HEAD")
    if not full:
        return "", "", False, ""
    short = git("rev-parse", "--short=7", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return full, short, dirty, strip_userinfo(git("remote", "get-url", "origin"))


def strip_userinfo(url: str) -> str:
    """https://user:token@host/x -> https://host/x: a remote's credentials never reach a label."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", url.strip(), flags=re.I)


def iso(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def patch_digest(build_info: dict) -> str:
    """The patch series' digest recorded by the build, else the digest of an empty series."""
    patches = build_info.get("patches") or {}
    if isinstance(patches, dict):
        for key in ("digest", "series_digest", "sha256"):
            if patches.get(key):
                return str(patches[key])
    if build_info.get("patch_series_digest"):
        return str(build_info["patch_series_digest"])
    return "sha256:" + hashlib.sha256(b"").hexdigest()


def labels_for(req: ImageRequest, item: PlatformInput, go_version: str, sbom_sha: str, version_tag: str) -> dict[str, str]:
    return {
        "org.opencontainers.image.source": req.source or "unknown",
        "org.opencontainers.image.revision": (req.revision + ("-dirty" if req.dirty else "")) if req.revision else "unknown",
        "org.opencontainers.image.version": version_tag,
        "org.opencontainers.image.created": iso(req.source_date_epoch),
        "org.opencontainers.image.title": req.name,
        "org.opencontainers.image.licenses": req.licenses,
        f"{LABEL_PREFIX}.kubernetes.version": req.k8s_version,
        f"{LABEL_PREFIX}.go.version": go_version,
        f"{LABEL_PREFIX}.patches.digest": patch_digest(item.build_info),
        f"{LABEL_PREFIX}.binary.sha256": item.build_info.get("binary", {}).get("sha256", ""),
        f"{LABEL_PREFIX}.sbom.sha256": sbom_sha,
        f"{LABEL_PREFIX}.sbom.media-type": sbom.MEDIA_TYPE,
    }


# --- deterministic layer and config --------------------------------------------------


def rootfs_entries(binary: Path, binary_name: str, ca_bundle: Path = CA_BUNDLE) -> list[tuple[str, int, int, int, bytes | Path | None]]:
    """(path, mode, uid, gid, content) for every entry of the single layer; None = directory."""
    if not ca_bundle.is_file():
        raise UserError(f"no CA bundle at {ca_bundle}", "apt-get install -y ca-certificates (TLS to extenders and API servers needs it)")
    passwd = f"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{UID}:{GID}:nonroot:/nonexistent:/sbin/nologin\n"
    group = f"root:x:0:\nnonroot:x:{GID}:\n"
    return [
        ("etc", 0o755, 0, 0, None),
        ("etc/group", 0o644, 0, 0, group.encode()),
        ("etc/passwd", 0o644, 0, 0, passwd.encode()),
        ("etc/ssl", 0o755, 0, 0, None),
        ("etc/ssl/certs", 0o755, 0, 0, None),
        ("etc/ssl/certs/ca-certificates.crt", 0o644, 0, 0, ca_bundle),
        ("tmp", 0o1777, 0, 0, None),
        ("usr", 0o755, 0, 0, None),
        ("usr/local", 0o755, 0, 0, None),
        (BIN_DIR, 0o755, 0, 0, None),
        (f"{BIN_DIR}/{binary_name}", 0o755, 0, 0, binary),
    ]


def write_layer(out, entries, epoch: int) -> None:
    """A deterministic tar: sorted entries, USTAR headers, fixed owners and mtimes."""
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.USTAR_FORMAT) as tar:
        for path, mode, uid, gid, content in sorted(entries, key=lambda e: e[0]):
            info = tarfile.TarInfo(path)
            info.mode, info.uid, info.gid, info.mtime = mode, uid, gid, epoch
            info.uname = info.gname = ""
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(content, Path):
                info.size = content.stat().st_size
                with open(content, "rb") as handle:
                    tar.addfile(info, handle)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))


class _HashingWriter:
    """Hash and count what passes through, optionally forwarding to a file."""

    def __init__(self, sink=None):
        self.sha = hashlib.sha256()
        self.size = 0
        self.sink = sink

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        self.size += len(data)
        if self.sink is not None:
            self.sink.write(data)
        return len(data)

    def flush(self) -> None:
        if self.sink is not None:
            self.sink.flush()


def layer_diff_id(entries, epoch: int) -> str:
    writer = _HashingWriter()
    write_layer(writer, entries, epoch)
    return "sha256:" + writer.sha.hexdigest()


def write_compressed_layer(path: Path, entries, epoch: int) -> tuple[str, str, int]:
    """Write the gzip-compressed layer to `path`; return (diff_id, digest, size).

    gzip's header carries an mtime and a file name: both are fixed (0, none) so the
    compressed digest depends on the content and zlib's level only.
    """
    with open(path, "wb") as raw:
        compressed = _HashingWriter(raw)
        with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, compresslevel=6, mtime=0) as gz:
            plain = _HashingWriter(gz)
            write_layer(plain, entries, epoch)
    return "sha256:" + plain.sha.hexdigest(), "sha256:" + compressed.sha.hexdigest(), compressed.size


def image_config(arch: str, diff_id: str, epoch: int, labels: dict[str, str], binary_name: str) -> bytes:
    config: dict[str, Any] = {
        "architecture": arch,
        "os": "linux",
        "created": iso(epoch),
        "author": f"scheduler-build {__version__}",
        "config": {
            "User": f"{UID}:{GID}",
            "Entrypoint": [f"/{BIN_DIR}/{binary_name}"],
            "Env": ["PATH=/usr/local/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
            "WorkingDir": "/",
            "Labels": dict(sorted(labels.items())),
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": iso(epoch), "created_by": f"scheduler-build image.build (dockerfiles/{DOCKERFILE_NAME}, assembly {ASSEMBLY_VERSION})"}],
    }
    if arch == "arm64":
        config["variant"] = "v8"
    return canonical(config)


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def platform_dict(arch: str) -> dict:
    out = {"architecture": arch, "os": "linux"}
    if arch == "arm64":
        out["variant"] = "v8"
    return out


# --- OCI layout ------------------------------------------------------------------------


class Layout:
    """An OCI image layout directory being written (blobs/sha256/<hex>, index.json)."""

    def __init__(self, root: Path):
        self.root = root
        self.blobs = root / "blobs" / "sha256"
        self.blobs.mkdir(parents=True, exist_ok=True)

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        path = self.blobs / digest.split(":", 1)[1]
        if not path.exists():
            path.write_bytes(data)
        return digest

    def adopt(self, file: Path, digest: str) -> None:
        target = self.blobs / digest.split(":", 1)[1]
        if not target.exists():
            os.replace(file, target)

    def blob_path(self, digest: str) -> Path:
        return self.blobs / digest.split(":", 1)[1]


def read_layout(layout: Path) -> dict:
    """image-info.json of a built layout, or {} when absent or unreadable."""
    try:
        return json.loads((layout / "image-info.json").read_text())
    except (OSError, ValueError):
        return {}


def blob(layout: Path, digest: str) -> bytes:
    return (layout / "blobs" / "sha256" / digest.split(":", 1)[1]).read_bytes()


# --- the build ---------------------------------------------------------------------------


def inputs_key(req: ImageRequest, tags: list[str]) -> str:
    """Everything that determines the images, hashed: equal keys mean identical images."""
    ca = hashlib.sha256(CA_BUNDLE.read_bytes()).hexdigest() if CA_BUNDLE.is_file() else ""
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
        "binaries": [(i.platform, i.build_info.get("binary", {}).get("sha256", ""), patch_digest(i.build_info)) for i in req.inputs],
    }
    return hashlib.sha256(canonical(material)).hexdigest()


def layout_dir(dist_dir: Path, name: str, k8s_version: str) -> Path:
    return Path(dist_dir).resolve() / name / k8s_version / "image"


def _local_tags(req: ImageRequest, tags: list[str], arch: str, native: str) -> list[str]:
    # The engine holds one image per tag: the native platform gets the plain tags,
    # every platform also gets an arch-suffixed one (still SemVer-safe).
    out = [f"{req.repository}:{tags[0]}-{arch}"]
    if arch == native:
        out = [f"{req.repository}:{t}" for t in tags] + out
    return out


def engine_has(engine: docker_api.Engine, refs_to_ids: dict[str, str]) -> bool:
    for ref, image_id in refs_to_ids.items():
        image = engine.inspect_image(ref)
        if image is None or image.id != image_id:
            return False
    return True


def build(req: ImageRequest, native_arch: str) -> ImageResult:
    """Assemble (or reuse) the images, SBOMs and index; load them into the engine."""
    tags = tags_for(req.k8s_version, req.spec_version, req.revision[:7] if req.revision else "", req.dirty, req.base_tag)
    layout = layout_dir(req.dist_dir, req.name, req.k8s_version)
    key = inputs_key(req, tags)
    engine = docker_api.connect() if req.load else None

    previous = read_layout(layout)
    if previous.get("inputs_key") == key and not req.force:
        expected = {ref: p["image_id"] for p in previous.get("platforms", []) for ref in p.get("local_tags", [])}
        if engine is None or engine_has(engine, expected):
            log(f"    {req.repository}:{tags[0]} is up to date (same inputs); --force rebuilds")
            return _result_from_info(layout, previous, skipped=True)
        log("    the layout is current but the engine lacks its images: loading them again")
        _load(engine, layout, previous)
        return _result_from_info(layout, previous, skipped=True)

    parent = layout.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tmp-image-", dir=parent))
    try:
        lay = Layout(staging)
        platforms_info = []
        index_entries = []
        for item in req.inputs:
            binary_name = item.binary.name
            with phase("image.sbom", f"{item.platform} from `go version -m`"):
                info = sbom.read_build_info(item.binary)
                binary_sha = item.build_info.get("binary", {}).get("sha256") or hashlib.sha256(item.binary.read_bytes()).hexdigest()
                doc = sbom.document(binary_name, binary_sha, req.k8s_version, item.platform, info, req.source_date_epoch)
                sbom_bytes = sbom.dumps(doc)
                sbom_path = item.binary.parent / f"{binary_name}.spdx.json"
                write_atomic(sbom_path, sbom_bytes)
                log(f"    {len(doc['packages'])} packages -> {sbom_path}")
            with phase("image.assemble", f"{item.platform}: {binary_name} on scratch"):
                labels = labels_for(req, item, info.go_version, hashlib.sha256(sbom_bytes).hexdigest(), tags[0])
                labels[f"{LABEL_PREFIX}.inputs"] = key
                entries = rootfs_entries(item.binary, binary_name)
                tmp_layer = staging / f".layer-{item.arch}.tar.gz"
                diff_id, layer_digest, layer_size = write_compressed_layer(tmp_layer, entries, req.source_date_epoch)
                lay.adopt(tmp_layer, layer_digest)
                config = image_config(item.arch, diff_id, req.source_date_epoch, labels, binary_name)
                config_digest = lay.put(config)
                manifest = canonical({
                    "schemaVersion": 2,
                    "mediaType": OCI_MANIFEST,
                    "config": {"mediaType": OCI_CONFIG, "digest": config_digest, "size": len(config)},
                    "layers": [{"mediaType": OCI_LAYER_GZIP, "digest": layer_digest, "size": layer_size}],
                    "annotations": {"org.opencontainers.image.created": iso(req.source_date_epoch)},
                })
                manifest_digest = lay.put(manifest)
                image_desc = {"mediaType": OCI_MANIFEST, "digest": manifest_digest, "size": len(manifest)}
                # The SBOM as an OCI artifact whose subject is this platform's image
                # (OCI 1.1 referrers; registries without the referrers API get the
                # tag-schema fallback index at push time).
                lay.put(EMPTY_JSON)
                sbom_digest = lay.put(sbom_bytes)
                artifact = canonical({
                    "schemaVersion": 2,
                    "mediaType": OCI_MANIFEST,
                    "artifactType": sbom.MEDIA_TYPE,
                    "config": {"mediaType": OCI_EMPTY, "digest": digest_of(EMPTY_JSON), "size": 2},
                    "layers": [{"mediaType": sbom.MEDIA_TYPE, "digest": sbom_digest, "size": len(sbom_bytes),
                                "annotations": {"org.opencontainers.image.title": sbom_path.name}}],
                    "subject": image_desc,
                    "annotations": {"org.opencontainers.image.created": iso(req.source_date_epoch)},
                })
                artifact_digest = lay.put(artifact)
                index_entries.append({**image_desc, "platform": platform_dict(item.arch)})
                log(f"    image {config_digest[:19]}, layer {layer_size} bytes (binary {item.binary.stat().st_size})")
            platforms_info.append({
                "platform": item.platform,
                "arch": item.arch,
                "image_id": config_digest,
                "manifest_digest": manifest_digest,
                "manifest_size": len(manifest),
                "layer_digest": layer_digest,
                "layer_size": layer_size,
                "binary_size": item.binary.stat().st_size,
                "sbom": str(sbom_path),
                "sbom_sha256": hashlib.sha256(sbom_bytes).hexdigest(),
                "sbom_manifest_digest": artifact_digest,
                "sbom_manifest_size": len(artifact),
                "local_tags": _local_tags(req, tags, item.arch, native_arch),
            })
        index = canonical({
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": index_entries,
            "annotations": {"org.opencontainers.image.created": iso(req.source_date_epoch),
                            "org.opencontainers.image.version": tags[0]},
        })
        index_digest = lay.put(index)
        (staging / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
        layout_index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {"mediaType": OCI_INDEX, "digest": index_digest, "size": len(index),
                 "annotations": {"org.opencontainers.image.ref.name": tag}} for tag in tags
            ] + [
                {"mediaType": OCI_MANIFEST, "digest": p["sbom_manifest_digest"], "size": p["sbom_manifest_size"],
                 "artifactType": sbom.MEDIA_TYPE} for p in platforms_info
            ],
        }
        (staging / "index.json").write_text(json.dumps(layout_index, indent=2, sort_keys=True) + "\n")
        image_info = {
            "schema": 1,
            "name": req.name,
            "repository": req.repository,
            "kubernetes_version": req.k8s_version,
            "tags": tags,
            "inputs_key": key,
            "source_date_epoch": req.source_date_epoch,
            "index_digest": index_digest,
            "index_size": len(index),
            "platforms": platforms_info,
        }
        (staging / "image-info.json").write_text(json.dumps(image_info, indent=2, sort_keys=True) + "\n")
        publish_dir(staging, layout, key[:16])
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    if engine is not None:
        _load(engine, layout, image_info)
    return _result_from_info(layout, image_info, skipped=False)


def _load(engine: docker_api.Engine, layout: Path, info: dict) -> None:
    """`docker load` each platform's image as a Docker archive with the layout's bytes."""
    for p in info["platforms"]:
        with phase("image.load", f"{p['platform']} as {', '.join(p['local_tags'])}"):
            manifest = json.loads(blob(layout, p["manifest_digest"]))
            config_digest = manifest["config"]["digest"]
            layer_digest = manifest["layers"][0]["digest"]
            buffer = tempfile.TemporaryFile()
            with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                def add(name: str, path: Path | None = None, data: bytes | None = None) -> None:
                    ti = tarfile.TarInfo(name)
                    if path is not None:
                        ti.size = path.stat().st_size
                        with open(path, "rb") as handle:
                            tar.addfile(ti, handle)
                    else:
                        ti.size = len(data)
                        tar.addfile(ti, io.BytesIO(data))

                config_name = config_digest.split(":", 1)[1] + ".json"
                layer_name = layer_digest.split(":", 1)[1] + ".tar.gz"
                add(config_name, path=layout / "blobs" / "sha256" / config_digest.split(":", 1)[1])
                add(layer_name, path=layout / "blobs" / "sha256" / layer_digest.split(":", 1)[1])
                add("manifest.json", data=json.dumps([{"Config": config_name, "RepoTags": p["local_tags"], "Layers": [layer_name]}]).encode())
            buffer.seek(0)
            try:
                ids = engine.load(buffer, f"the {p['platform']} image")
            finally:
                buffer.close()
            if p["image_id"] not in ids:
                raise UserError(f"docker load produced {sorted(ids)}, expected {p['image_id']}", "the engine rewrote the image config; please report this")


def _result_from_info(layout: Path, info: dict, skipped: bool) -> ImageResult:
    platforms = [
        PlatformImage(
            platform=p["platform"], arch=p["arch"], config_digest=p["image_id"], manifest_digest=p["manifest_digest"],
            manifest_size=p["manifest_size"], layer_size=p["layer_size"], binary_size=p["binary_size"],
            sbom_path=Path(p["sbom"]), sbom_manifest_digest=p["sbom_manifest_digest"], local_tag=p["local_tags"][0],
        )
        for p in info["platforms"]
    ]
    return ImageResult(layout=layout, tags=info["tags"], index_digest=info["index_digest"], platforms=platforms, skipped=skipped)


# --- inputs: the spec (or flags) and the binaries under dist/ -------------------------------


@dataclass
class Options:
    spec_path: str = ""
    k8s_version: str = ""
    k8s_default: str = "1.36"  # k8s.version, for plain builds without --k8s-version
    platforms: str = ""
    name: str = ""
    spec_version: str = ""
    repository: str = ""
    dist_dir: Path = Path("dist")
    cache_dir: Path = Path(".cache")
    source_date_epoch: str = ""
    licenses: str = "Apache-2.0"
    source: str = ""
    build_missing: bool = True
    pull: bool = False
    force: bool = False
    load: bool = True


def _from_spec(path: str):
    from scheduler_build.build import from_spec as spec_build

    return spec_build.load_spec(Path(path))


def prepare(opts: Options, host_arch: str) -> ImageRequest:
    """Resolve spec/flags, find (or build) each platform's binary, return the request."""
    import dataclasses

    from scheduler_build.build import pipeline as build_stage
    from scheduler_build.resolve import versions as k8s
    from scheduler_build.build import from_spec as spec_build

    spec = _from_spec(opts.spec_path) if opts.spec_path else None
    requested = opts.k8s_version or (spec.kubernetes_version if spec else "") or opts.k8s_default
    platforms_text = opts.platforms or (",".join(spec.platforms) if spec and spec.platforms else f"linux/{host_arch}")
    platforms = parse_platforms(platforms_text)
    name = opts.name or (spec.name if spec else "") or "kube-scheduler"
    spec_version = opts.spec_version or (spec.version if spec else "") or "0.1.0"
    check_spec_version(spec_version)
    repository = opts.repository or (spec.image.repository if spec and spec.image.repository else "") or f"scheduler-build/{name}"
    resolution = k8s.resolve(requested, opts.cache_dir)

    inputs = []
    for plat, arch in platforms:
        platform_dir = Path(opts.dist_dir).resolve() / name / resolution.version / f"linux-{arch}"
        info_path = platform_dir / "build-info.json"
        if not info_path.is_file():
            if not opts.build_missing:
                raise UserError(f"no {plat} build at {platform_dir}", f"run `inv build --arch {arch}` first")
            with phase("image.binary", f"building {plat} (no binary under {platform_dir})"):
                request = build_stage.BuildRequest(
                    k8s_version=requested, arch=arch, name=name, dist_dir=Path(opts.dist_dir), cache_dir=opts.cache_dir,
                    pull=opts.pull, source_date_epoch=opts.source_date_epoch)
                if spec is not None:
                    # The same plugins, patches and suffix `inv build --spec` compiles in.
                    request = spec_build.apply_spec(request, spec, k8s_version=opts.k8s_version or None, name=name, version_suffix=None)
                    request = dataclasses.replace(request, arch=arch)
                build_stage.run(request)
        try:
            info = json.loads(info_path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{info_path} is unreadable: {exc}", "rebuild with `inv build`") from None
        binary = platform_dir / info.get("component", "kube-scheduler")
        if not binary.is_file():
            raise UserError(f"{info_path} names {binary.name}, which is missing", "rebuild with `inv build`")
        recorded = info.get("binary", {}).get("sha256", "")
        if recorded and build_stage.sha256_file(binary) != recorded:
            # The skip decision and the labels trust build-info: make sure it describes this binary.
            raise UserError(f"{binary} does not match the sha256 in {info_path} (changed after the build?)", f"rebuild with `inv build --arch {arch}`")
        inputs.append(PlatformInput(plat, arch, binary, info))

    epoch_text = str(opts.source_date_epoch or os.environ.get("SOURCE_DATE_EPOCH", "")).strip()
    if epoch_text:
        try:
            epoch = int(epoch_text)
        except ValueError:
            raise UserError(f"SOURCE_DATE_EPOCH must be an integer count of seconds, got {epoch_text!r}", "e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)") from None
    else:
        # The binary's own build date: the image is as old as what it ships.
        epoch = int(inputs[0].build_info.get("source_date_epoch") or 0)
    full, _short, dirty, origin = git_state(spec.path.parent if spec else None)
    return ImageRequest(
        name=name, k8s_version=resolution.version, spec_version=spec_version, repository=repository, inputs=inputs,
        source_date_epoch=epoch, dist_dir=Path(opts.dist_dir), source=opts.source or origin, revision=full, dirty=dirty,
        licenses=opts.licenses, force=opts.force, load=opts.load,
        base_tag=(spec.image.tag if spec is not None and spec.image.tag and not opts.spec_version else ""),
    )
