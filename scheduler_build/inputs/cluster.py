"""The inputs of the cluster tasks: one frozen record each, decided and checked before anything is built
or started (a bad --timeout or --registry must not cost a kube-apiserver build)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.build import debuggable
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.cluster import node as node_mod
from scheduler_build.cluster import pull_hosts
from scheduler_build.config import render, target
from scheduler_build.errors import UserError
from scheduler_build.extender.config import default_image_tag
from scheduler_build.image import assemble
from scheduler_build.image.info import ImageInfo
from scheduler_build.inputs.build import build_request
from scheduler_build.inputs.common import cache_dir, load_spec, option
from scheduler_build.platforms import host_arch


@dataclass(frozen=True)
class UpInputs:
    """cluster.up: where, what runs, and how each binary is had (an explicit one, or our own build's request)."""

    state_dir: Path
    etcd: str
    timeout: float  # seconds for each process to become ready
    apiserver: Path | None  # --apiserver / cluster.apiserver; None: build `builds["kube-apiserver"]`
    builds: dict[str, BuildRequest]  # component -> its build (kube-apiserver, and with --node the node's)
    node: bool
    registries: tuple[pull_hosts.NodeRegistry, ...]  # with --node: where the node pulls from
    cache_dir: Path


@dataclass(frozen=True)
class LoadInputs:
    """cluster.load: the node's state directory and (image, name on the node) pairs, each checked to exist."""

    state_dir: Path
    images: tuple[tuple[str, str], ...]


def state_dir(c: Any, flag: str | None = None) -> Path:
    """--state-dir, else cluster.state_dir, else <cache>/cluster."""
    configured = option(c, "cluster.state_dir", flag)
    return Path(configured).expanduser().resolve() if configured else _cache(c) / "cluster"


def _cache(c: Any) -> Path:
    return cache_dir(c)


@dataclass(frozen=True)
class StatusInputs:
    """cluster.status: the state directory, and the spec whose scheduler is judged against the API server."""

    state_dir: Path
    spec_path: str
    cache_dir: Path


def status_inputs(c: Any, *, state_dir_flag: str | None = None, spec: str | None = None) -> StatusInputs:
    return StatusInputs(state_dir(c, state_dir_flag), str(option(c, "spec.path", spec)), cache_dir(c))


def component_request(c: Any, component: str, k8s_version: str | None = None, dist: str | None = None) -> BuildRequest:
    """Our own hermetic build of one Kubernetes component (cached like every build): the builder.* and build.*
    settings of `inv build`, except what would make it another program: for this host, under its own name, unstamped."""
    return build_request(c, k8s_version=k8s_version, component=component, arch=host_arch(), os="linux", name=component,
                         version_suffix="", dist=dist)


def up_inputs(c: Any, *, k8s_version: str | None = None, apiserver: str | None = None, etcd: str | None = None,
              state_dir_flag: str | None = None, timeout: Any = None, node: bool = False,
              registry: list[str] | None = None, registry_ca: str | None = None, dist: str | None = None) -> UpInputs:
    """Every value by the one precedence rule; --registry without --node is refused here."""
    urls = list(registry or []) or [u for u in str(option(c, "cluster.registries") or "").split(",") if u.strip()]
    ca = option(c, "cluster.registry_ca", registry_ca) or ""
    if (registry or registry_ca) and not node:
        raise UserError("--registry and --registry-ca configure the node's containerd", "add --node")
    explicit = option(c, "cluster.apiserver", apiserver)
    components = (() if explicit else ("kube-apiserver",)) + (node_mod.COMPONENTS if node else ())
    return UpInputs(
        state_dir=state_dir(c, state_dir_flag), etcd=option(c, "cluster.etcd", etcd),
        timeout=float(option(c, "cluster.timeout", timeout)),
        apiserver=Path(explicit).expanduser() if explicit else None,
        builds={name: component_request(c, name, k8s_version, dist) for name in components},
        node=bool(node), registries=tuple(pull_hosts.parse(urls, ca)) if node else (), cache_dir=_cache(c))


def load_inputs(c: Any, *, refs: list[str], spec: str | None = None, state_dir_flag: str | None = None,
                dist: str | None = None) -> LoadInputs:
    """The images to import: the references given and, with --spec, the spec's scheduler and extender images;
    a missing node is refused first."""
    directory = state_dir(c, state_dir_flag)
    if not node_mod.running(directory):
        raise UserError(f"no running node in {directory}", "start one with `inv cluster.up --node`")
    pairs = [(one, "") for one in refs if one]
    if spec:
        pairs += spec_images(c, spec, dist)
    if not pairs:
        raise UserError("nothing to load", "pass image references, or --spec S")
    return LoadInputs(directory, tuple(pairs))


def spec_images(c: Any, spec: str, dist: str | None = None) -> list[tuple[str, str]]:
    """(local image, name on the node) for the spec's scheduler and, when enabled, its reference extender."""
    loaded = load_spec(c, spec)
    assert loaded is not None  # an explicit --spec is loaded or refused
    release = target.kubernetes_release(loaded, None, _cache(c))
    # A spec with debuggable.enabled is packaged as the debuggable build, beside the release one (docs/explain.md).
    name = debuggable.dist_name(loaded.name) if loaded.debuggable.enabled else loaded.name
    layout = assemble.layout_dir(Path(option(c, "paths.dist_dir", dist)), name, release)
    if not (layout / "index.json").is_file():
        raise UserError(f"no image built for {spec} under {layout}", f"run `inv image.build --spec {spec}` first")
    ImageInfo.of_layout(layout)  # an old, foreign or altered layout is one clear error before the node imports it
    pairs = [(str(layout), render.image_ref(loaded, release))]
    ext = loaded.reference_extender
    if ext.enabled:  # the local image is the tag `inv image.extender` built; the spec may name it otherwise on the node
        built = option(c, "image.extender_tag") or default_image_tag()
        pairs.append((built, ext.image or built))
    return pairs
