"""cluster: a local etcd + kube-apiserver control plane for end-to-end runs."""

from pathlib import Path

from invoke import Collection, task

from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.build import debuggable
from scheduler_build.build import pipeline as build_stage
from scheduler_build.cluster import containerd as containerd_mod
from scheduler_build.cluster import controlplane as cluster_mod
from scheduler_build.cluster import dns as dns_mod
from scheduler_build.cluster import load as load_mod
from scheduler_build.cluster import node as node_mod
from scheduler_build.cluster import registries as registries_mod
from scheduler_build.config import render
from scheduler_build.config import target
from scheduler_build.deploy import apply
from scheduler_build.errors import UserError
from scheduler_build.extender_config import default_image_tag
from scheduler_build.image import assemble
from scheduler_build.image.info import ImageInfo
from scheduler_build.platforms import host_arch
from scheduler_build.progress import phase
from scheduler_build.commands._common import build_request, describe, emit, emit_json, option, user_errors


STATE_DIR_DEFAULT = describe("cluster.state_dir", "<cache>/cluster")


def resolve_state_dir(c, flag=None) -> Path:
    """cluster.state_dir, else <cache>/cluster."""
    configured = option(c, "cluster.state_dir", flag)
    return Path(configured).expanduser().resolve() if configured else settings.cache_dir(c.config) / "cluster"


def apiserver_binary(c, apiserver=None, k8s_version=None) -> Path:
    """An explicit binary (flag or cluster.apiserver), else our own hermetic build of kube-apiserver."""
    explicit = option(c, "cluster.apiserver", apiserver)
    if explicit:
        return Path(explicit).expanduser()
    return component_binary(c, "kube-apiserver", k8s_version)


def component_binary(c, component: str, k8s_version=None) -> Path:
    """Our own hermetic build of one Kubernetes component (cached like every build): the builder.* and build.*
    settings of `inv build`, except what would make it another program: for this host, under its own name, unstamped."""
    request = build_request(c, k8s_version=k8s_version, component=component, arch=host_arch(), os="linux", name=component,
                            version_suffix="")
    return build_stage.run(request).binary


def node_registries(c, flags, ca_flag, node: bool) -> list:
    """--registry (repeatable) or cluster.registries (comma-separated), checked before anything is built."""
    urls = list(flags or []) or [u for u in str(option(c, "cluster.registries") or "").split(",") if u.strip()]
    ca = option(c, "cluster.registry_ca", ca_flag) or ""
    if (flags or ca_flag) and not node:
        raise UserError("--registry and --registry-ca configure the node's containerd", "add --node")
    return registries_mod.parse(urls, ca) if node else []


@task(help={
    "k8s-version": f"version of the kube-apiserver to build and run ({describe('k8s.version')})",
    "apiserver": f"use this kube-apiserver binary instead of building one ({describe('cluster.apiserver', 'build it')})",
    "etcd": f"etcd binary ({describe('cluster.etcd')})",
    "state-dir": f"certificates, kubeconfigs, data, logs and pids ({STATE_DIR_DEFAULT})",
    "timeout": f"seconds to wait for each process to become ready ({describe('cluster.timeout')})",
    "json": "print the cluster's state as JSON instead of the admin kubeconfig path",
    "node": "also run one real node: containerd 2 (built from the Go module proxy), kubelet, kube-proxy, "
            "kube-controller-manager (root; see inv doctor --node)",
    "registry": "with --node: a registry the node pulls from, http://HOST:PORT or https://HOST:PORT; repeat for more "
                f"({describe('cluster.registries', 'none')})",
    "registry-ca": "with --node: CA bundle for the https registries (default: /etc/docker/certs.d/<host:port>/ca.crt, "
                   "else the system's)",
}, iterable=["registry"])
@user_errors
def up(c, k8s_version=None, apiserver=None, etcd=None, state_dir=None, timeout=None, json=False, node=False,
       registry=None, registry_ca=None):
    """Start etcd and kube-apiserver (127.0.0.1, or the node address with --node) with certificates and RBAC."""
    directory = resolve_state_dir(c, state_dir)
    # Every flag is parsed before anything is built: a bad --timeout must not cost a kube-apiserver build.
    etcd, wait = option(c, "cluster.etcd", etcd), float(option(c, "cluster.timeout", timeout))
    pull_from = node_registries(c, registry, registry_ca, node)
    binary = apiserver_binary(c, apiserver, k8s_version)
    if node:
        binaries = {name: component_binary(c, name, k8s_version) for name in node_mod.COMPONENTS}
        binaries["coredns"] = dns_mod.binary(settings.cache_dir(c.config))
        binaries.update(containerd_mod.build(settings.cache_dir(c.config)))
        with phase("cluster up --node", str(directory)):
            state = node_mod.up(binary, binaries, directory, settings.cache_dir(c.config), etcd, wait, pull_from)
    else:
        with phase("cluster up", str(directory)):
            state = cluster_mod.up(binary, directory, etcd=etcd, timeout=wait)
    emit(state.to_json() if json else state.admin_kubeconfig)


@task(help={
    "state-dir": f"the cluster's state directory ({STATE_DIR_DEFAULT})",
})
@user_errors
def down(c, state_dir=None):
    """Stop the cluster's processes and remove its state directory (nothing is left behind)."""
    directory = resolve_state_dir(c, state_dir)
    with phase("cluster down", str(directory)):
        stopped = node_mod.down(directory)
    emit_json({"state_dir": str(directory), "stopped": stopped})


@task(help={
    "state-dir": f"the cluster's state directory ({STATE_DIR_DEFAULT})",
    "spec": f"the build spec whose scheduler is judged against the API server's version ({describe('spec.path')})",
})
@user_errors
def status(c, state_dir=None, spec=None):
    """Print whether the cluster's processes run and the API server is ready, as JSON.

    With the version skew pair: the spec's scheduler beside the API server, judged by Kubernetes' policy."""
    directory = resolve_state_dir(c, state_dir)
    control_plane = cluster_mod.status(directory)
    report = control_plane.as_dict()
    if control_plane.running or control_plane.version:
        report["version_skew"] = apply.skew_pair(option(c, "spec.path", spec), control_plane.version,
                                                  settings.cache_dir(c.config))
    node_report = node_mod.status(directory)
    if node_report:
        report["node"] = node_report
        report["running"] = control_plane.running and node_report["running"]
    emit_json(report)


def spec_images(c, spec_path: str) -> list[tuple[str, str]]:
    """(local image, name on the node) for the spec's scheduler and, when enabled, its reference extender."""
    loaded = spec_mod.load(spec_path)
    release = target.kubernetes_release(loaded, None, settings.cache_dir(c.config))
    scheduler = render.image_ref(loaded, release)
    # A spec with debuggable.enabled is packaged as the debuggable build, beside the release one (docs/explain.md).
    name = debuggable.dist_name(loaded.name) if loaded.debuggable.enabled else loaded.name
    layout = assemble.layout_dir(Path(option(c, "paths.dist_dir")), name, release)
    if not (layout / "index.json").is_file():
        raise UserError(f"no image built for {spec_path} under {layout}", f"run `inv image.build --spec {spec_path}` first")
    ImageInfo.of_layout(layout)  # an old, foreign or altered layout is one clear error before the node imports it
    pairs = [(str(layout), scheduler)]
    ext = loaded.reference_extender
    if ext.enabled:
        built = option(c, "image.extender_tag") or default_image_tag()
        pairs.append((built, ext.image or built))
    return pairs


@task(iterable=["ref"], help={
    "ref": "an image of the local Docker engine, an OCI layout directory or an archive (repeatable; "
           "invoke has no optional positional arguments, so also: `inv cluster.load -- REF...`)",
    "spec": "load the spec's scheduler image and, when referenceExtender is enabled, the extender image",
    "state-dir": f"the cluster's state directory ({STATE_DIR_DEFAULT})",
})
@user_errors
def load(c, ref=None, spec=None, state_dir=None):
    """Import built images into the node's containerd (like `kind load`); nothing is pulled."""
    directory = resolve_state_dir(c, state_dir)
    if not node_mod.running(directory):
        raise UserError(f"no running node in {directory}", "start one with `inv cluster.up --node`")
    remainder = str(getattr(c, "remainder", "") or "").split()  # `inv cluster.load -- REF...`
    pairs = [(one, "") for one in [*(ref or []), *remainder] if one]
    if spec:
        pairs += spec_images(c, spec)
    if not pairs:
        raise UserError("nothing to load", "pass image references, or --spec S")
    ctd_dir = directory / "node" / "containerd"
    with phase("cluster load", f"{len(pairs)} image(s)"):
        loaded = [load_mod.load(ctd_dir, ref, name) for ref, name in pairs]
    emit("\n".join(loaded))


ns = Collection("cluster", up, down, status, load)
