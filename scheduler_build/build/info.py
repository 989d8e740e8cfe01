"""build-info.json: the contract between the build and every later stage.

The build writes it from one `BuildInfo`; the image stage (and anything else that
packages a binary) reads it back through `BuildInfo.from_file`, so a key is named
in one place. The JSON keys are the ones the record has always had, plus
`patch_series_digest` (the digest the image's patches label carries) and, from
schema 2, `kubernetes.module_sum`, recorded while the build has Go and the
module proxy at hand so the image stage needs neither.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from scheduler_build.errors import UserError

FILE_NAME = "build-info.json"
SCHEMA = 2  # 2: kubernetes.module_sum (the image stage no longer asks Go for it)


@dataclass
class KubernetesInfo:
    requested: str
    version: str  # resolved release, e.g. v1.36.3
    stamped_version: str  # what `--version` prints, e.g. v1.36.3-acme.1
    go_version_required: str
    staging_replaces: dict[str, str] = field(default_factory=dict)
    module_sum: str = ""  # go.sum's h1: hash of k8s.io/kubernetes at `version` (the provenance's go.sum annotation)


@dataclass
class BuilderInfo:
    image: str
    image_id: str
    go_version: str
    source: str
    toolchain: str = ""  # the Go toolchain module it was bootstrapped from, `module@version h1:...`


@dataclass
class VendorInfo:
    go_sum_sha256: str
    key: str
    cached: bool


@dataclass
class PluginInfo:
    """One compiled-in plugin: a local module (`source` path, `sha256` of its tree) or a proxy module."""

    package: str
    names: list[str] = field(default_factory=list)
    source: str = ""  # "path" or "module"
    module: str = ""
    path: str = ""
    version: str = ""
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        # Only the keys that apply to this source: a module plugin has no path or sha256.
        return {k: v for k, v in dataclasses.asdict(self).items() if k in ("package", "names") or v != ""}


@dataclass
class PatchInfo:
    file: str  # the patch's file name
    sha256: str  # of its bytes
    targets: list[Any] = field(default_factory=list)


@dataclass
class PgoInfo:
    """The CPU profile of a profile-guided build (build/pgo.py)."""

    path: str  # the profile file, as the build read it
    sha256: str  # of its bytes: the same profile gives the same binary
    flag: str  # what `go version -m` shows of it: -pgo=default.pgo


@dataclass
class FlagsInfo:
    command: list[str]
    ldflags: str
    env: dict[str, str]
    network: str
    cgo_static: bool


@dataclass
class BinaryInfo:
    path: str
    sha256: str
    size: int
    static: bool
    elf_type: str
    version_output: str
    version_check: str


@dataclass
class HostInfo:
    machine: str
    python: str


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in blocks (binaries are tens of megabytes)."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def series_digest(patches: Iterable[PatchInfo]) -> str:
    """The patch series' digest: sha256 over `<file>\\0<sha256>\\n` per patch, in order.

    An empty series hashes nothing, so an unpatched build's digest is sha256 of b"".
    """
    h = hashlib.sha256()
    for patch in patches:
        h.update(f"{patch.file}\0{patch.sha256}\n".encode())
    return "sha256:" + h.hexdigest()


class JsonRecord:
    """A typed record's one encoding (indented, sorted JSON) and its file: build-info.json, image-info.json."""

    FILE_NAME = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def write(self, directory: Path) -> Path:
        path = Path(directory) / self.FILE_NAME
        path.write_text(self.to_json())
        return path


@dataclass
class BuildInfo(JsonRecord):
    scheduler_build: str
    name: str
    component: str
    platform: str  # linux/amd64
    kubernetes: KubernetesInfo
    builder: BuilderInfo
    vendor: VendorInfo
    flags: FlagsInfo
    source_date_epoch: int
    binary: BinaryInfo
    host: HostInfo
    plugins: list[PluginInfo] = field(default_factory=list)
    patches: list[PatchInfo] = field(default_factory=list)
    patch_series_digest: str = ""  # empty: computed from `patches`
    phases_seconds: dict[str, float] = field(default_factory=dict)
    duration_seconds: float = 0.0
    debuggable: dict[str, Any] = field(default_factory=dict)  # the recorder's settings; empty: a release build
    pgo: PgoInfo | None = None  # the profile of a profile-guided build; None: built without one
    schema: int = SCHEMA
    FILE_NAME = FILE_NAME  # not a field: no annotation

    def __post_init__(self) -> None:
        if not self.patch_series_digest:
            self.patch_series_digest = series_digest(self.patches)

    @property
    def arch(self) -> str:
        return self.platform.partition("/")[2]

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["plugins"] = [p.to_dict() for p in self.plugins]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BuildInfo:
        """The record as written by `to_dict`; KeyError/TypeError on anything else."""
        nested = {
            "kubernetes": KubernetesInfo(**data["kubernetes"]),
            "builder": BuilderInfo(**data["builder"]),
            "vendor": VendorInfo(**data["vendor"]),
            "flags": FlagsInfo(**data["flags"]),
            "binary": BinaryInfo(**data["binary"]),
            "host": HostInfo(**data["host"]),
            "plugins": [PluginInfo(**p) for p in data.get("plugins", [])],
            "patches": [PatchInfo(**p) for p in data.get("patches", [])],
            "pgo": PgoInfo(**data["pgo"]) if data.get("pgo") else None,
        }
        plain = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name not in nested and f.name in data}
        return cls(**plain, **nested)

    @classmethod
    def from_file(cls, path: Path) -> BuildInfo:
        """Read a build's record; a missing, unreadable or foreign file is one clear UserError."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{path} is unreadable: {exc}", "rebuild with `inv build`") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise UserError(f"{path} is not a schema-{SCHEMA} build record", "rebuild with `inv build`")
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError) as exc:
            raise UserError(f"{path} does not match this version's build record ({exc})", "rebuild with `inv build`") from None
