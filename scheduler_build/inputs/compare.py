"""The inputs of `compare` and `snapshot.*`: every flag decided and checked before anything is built or
started (a malformed snapshot or a missing configuration must not cost a build)."""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.inputs.common import spec_at
from scheduler_build.build.info import BuildInfo
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.compare import tiebreak
from scheduler_build.compare.generate import GenerateRequest, parse_pod_label
from scheduler_build.errors import UserError
from scheduler_build.inputs.build import build_request
from scheduler_build.inputs.cluster import component_request
from scheduler_build.inputs.common import option
from scheduler_build.inputs.dev import kubeconfig_of  # the same kubeconfig rule as dev.run
from scheduler_build.platforms import host_arch
from scheduler_build.resolve import versions
from scheduler_build.safeyaml import load_json
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class SideInputs:
    """One side of a comparison: a spec (built as its compare build) or a built binary with its configuration."""

    label: str  # "a" or "b"
    source: str  # what the user passed
    spec: Spec | None
    request: BuildRequest | None  # the spec's compare build (tie-break patch added); None for a binary
    binary: Path | None  # a built kube-scheduler given as is
    config_file: Path | None  # its KubeSchedulerConfiguration (a binary side)
    profile: str  # "" : the first profile
    k8s_version: str  # the API server's Kubernetes version ("": the binary's own, read at run time)
    apiserver: BuildRequest | None  # our kube-apiserver build of that version (None: cluster.apiserver given)
    apiserver_binary: Path | None


@dataclass(frozen=True)
class CompareInputs:
    snapshot: snapshot_mod.Snapshot
    snapshot_path: Path
    a: SideInputs
    b: SideInputs
    pending_only: bool
    json_out: Path | None
    chart_out: Path | None
    etcd: str
    timeout: float  # seconds for each process to become ready, and for a side to settle
    work_root: Path  # each side's temporary state lives in a fresh directory under it


def _ctx(c: Any) -> Any:
    return c.config if hasattr(c, "config") else c


def compare_request(request: BuildRequest, minor: str | None = None) -> BuildRequest:
    """The spec's build as compare runs it: the tie-break patch of its minor (resolved through the build's own
    version resolution unless given) last in the series, under its own dist name."""
    minor = minor or versions.resolve(request.k8s_version, request.cache_dir).minor
    return dataclasses.replace(
        request, patches=tuple(request.patches) + (tiebreak.patch_file(request.cache_dir, minor),),
        version_suffix=tiebreak.stamped_suffix(request.version_suffix),
        name=tiebreak.dist_name(request.name or request.component))


def side_inputs(c: Any, label: str, source: str | None, config: str | None, profile: str | None,
         apiserver: str | None, dist: str | None = None) -> SideInputs:
    """A spec path is loaded and its compare build requested; anything else must be a kube-scheduler binary
    with --{label}-config (the flags are -a and -b)."""
    if not source:
        raise UserError(f"compare needs -{label}", f"pass -{label} SPEC.yaml, or -{label} BINARY --{label}-config FILE")
    path = Path(source).expanduser()
    if not path.exists():
        raise UserError(f"-{label} {source}: no such file", "pass a build spec (.yaml) or a kube-scheduler binary")
    explicit_apiserver = Path(apiserver).expanduser() if apiserver else None
    if path.suffix in (".yaml", ".yml"):
        if config:
            raise UserError(f"--{label}-config is for a built binary; {source} is a spec",
                            f"drop --{label}-config: the spec's own configuration is used")
        spec = spec_at(Path(path))
        request = compare_request(build_request(c, arch=host_arch(), component="kube-scheduler", spec=spec, dist=dist))
        return SideInputs(label, source, spec, request, None, None, profile or "", request.k8s_version,
                    None if explicit_apiserver else component_request(c, "kube-apiserver", request.k8s_version, dist),
                    explicit_apiserver)
    if not config:
        raise UserError(f"-{label} {source} is a binary and has no configuration",
                        f"pass --{label}-config FILE (its KubeSchedulerConfiguration)")
    config_path = Path(config).expanduser()
    if not config_path.is_file():
        raise UserError(f"--{label}-config {config}: no such file", "pass the binary's KubeSchedulerConfiguration")
    version = _built_version(path)
    if not version and not explicit_apiserver:
        raise UserError(f"-{label} {source}: no build-info.json beside it tells its Kubernetes version",
                        "pass --apiserver BINARY (a kube-apiserver the skew policy allows with it)")
    return SideInputs(label, source, None, None, path.resolve(), config_path.resolve(), profile or "", version,
                component_request(c, "kube-apiserver", version, dist) if version and not explicit_apiserver else None,
                explicit_apiserver)


def _built_version(binary: Path) -> str:
    """The Kubernetes version in the build-info.json beside a binary we built ("" when there is none)."""
    info = binary.resolve().parent / "build-info.json"
    if not info.is_file():
        return ""
    try:
        return BuildInfo.from_dict(load_json(info.read_bytes())).kubernetes.version
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UserError(f"{info} is not a build-info.json", "rebuild the binary, or pass --apiserver") from None


def compare_inputs(c: Any, *, snapshot: str, a: str | None, b: str | None, a_config: str | None = None,
                   b_config: str | None = None, profile: str | None = None, pending_only: bool = False,
                   json_out: str | None = None, chart_out: str | None = None, apiserver: str | None = None,
                   timeout: Any = None, dist: str | None = None) -> CompareInputs:
    """Every value by the one precedence rule; the snapshot is read (strictly) before any build."""
    shot_path = Path(snapshot).expanduser()
    shot = snapshot_mod.load(shot_path)
    explicit = option(c, "cluster.apiserver", apiserver) or None
    sides = [side_inputs(c, "a", a, a_config, profile, explicit, dist), side_inputs(c, "b", b, b_config, profile, explicit, dist)]
    for out, flag in ((json_out, "--json"), (chart_out, "--chart")):
        if out and not Path(out).expanduser().resolve().parent.is_dir():
            raise UserError(f"{flag} {out}: its directory does not exist", "create it or pick another path")
    root = settings.cache_dir(_ctx(c)) / "compare"
    return CompareInputs(snapshot=shot, snapshot_path=shot_path, a=sides[0], b=sides[1], pending_only=bool(pending_only),
                         json_out=Path(json_out).expanduser() if json_out else None,
                         chart_out=Path(chart_out).expanduser() if chart_out else None,
                         etcd=option(c, "cluster.etcd"), timeout=float(option(c, "cluster.timeout", timeout)),
                         work_root=root)


def new_workdir(root: Path, label: str) -> Path:
    """A fresh directory for one side's state (removed by the flow when the side ends)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"side-{label}-", dir=root))


@dataclass(frozen=True)
class TakeInputs:
    kubeconfig: str
    out: Path
    anonymize: bool


def take_inputs(c: Any, *, kubeconfig: str | None, out: str | None, anonymize: bool = False,
                state_dir_flag: str | None = None) -> TakeInputs:
    if not out:
        raise UserError("snapshot.take needs --out FILE", "pass --out snapshot.json")
    return TakeInputs(kubeconfig_of(c, kubeconfig, state_dir_flag), _out(out), bool(anonymize))


def _out(out: str) -> Path:
    path = Path(out).expanduser()
    if not path.resolve().parent.is_dir():
        raise UserError(f"--out {out}: its directory does not exist", "create it or pick another path")
    return path


def generate_inputs(*, nodes: Any, pods: Any, out: str | None, pod_label: list[str] | None = None,
                    node_shapes: str | None = None, pod_mix: str | None = None, seed: Any = 1) -> tuple[GenerateRequest, Path]:
    if not out:
        raise UserError("snapshot.generate needs --out FILE", "pass --out snapshot.json")
    request = GenerateRequest.checked(nodes=nodes, pods=pods, labels=tuple(parse_pod_label(x) for x in pod_label or ()),
                                      node_shapes=node_shapes or "mixed", pod_mix=pod_mix or "mixed", seed=seed)
    return request, _out(out)
