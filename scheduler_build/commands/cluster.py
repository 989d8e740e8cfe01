"""cluster: a local etcd + kube-apiserver control plane for end-to-end runs.

Each task decides its inputs first (inputs/cluster.py), then acts (flows/cluster.py for `up`)."""

from invoke import Collection, task

from scheduler_build.cluster import controlplane as cluster_mod
from scheduler_build.cluster import load as load_mod
from scheduler_build.cluster import node as node_mod
from scheduler_build.deploy import apply
from scheduler_build.flows import cluster as cluster_flow
from scheduler_build.inputs import cluster as cluster_inputs
from scheduler_build.progress import phase
from scheduler_build.commands._common import emit, emit_json, flag_help, user_errors


STATE_DIR_HELP = flag_help("cluster.state_dir")


@task(help={
    "k8s-version": flag_help("k8s.version", after="; of the kube-apiserver to build and run"),
    "apiserver": flag_help("cluster.apiserver"),
    "etcd": flag_help("cluster.etcd"),
    "state-dir": STATE_DIR_HELP,
    "timeout": flag_help("cluster.timeout"),
    "json": "print the cluster's state as JSON instead of the admin kubeconfig path",
    "node": "also run one real node: containerd 2 (built from the Go module proxy), kubelet, kube-proxy, "
            "kube-controller-manager (root; see inv doctor --node)",
    "registry": flag_help("cluster.registries", "none"),
    "registry-ca": flag_help("cluster.registry_ca"),
    "dist": flag_help("paths.dist_dir", after="; where the kube-apiserver built without --apiserver goes"),
}, iterable=["registry"])
@user_errors
def up(c, k8s_version=None, apiserver=None, etcd=None, state_dir=None, timeout=None, json=False, node=False,
       registry=None, registry_ca=None, dist=None):
    """Start etcd and kube-apiserver (127.0.0.1, or the node address with --node) with certificates and RBAC."""
    # Every flag is decided and checked before anything is built: a bad --timeout must not cost a kube-apiserver build.
    inputs = cluster_inputs.up_inputs(c, k8s_version=k8s_version, apiserver=apiserver, etcd=etcd, state_dir_flag=state_dir,
                                      timeout=timeout, node=node, registry=registry, registry_ca=registry_ca,
                                      dist=dist)
    state = cluster_flow.up(inputs)
    emit(state.to_json() if json else state.admin_kubeconfig)


@task(help={
    "state-dir": STATE_DIR_HELP,
})
@user_errors
def down(c, state_dir=None):
    """Stop the cluster's processes and remove its state directory (nothing is left behind)."""
    directory = cluster_inputs.state_dir(c, state_dir)
    with phase("cluster down", str(directory)):
        stopped = node_mod.down(directory)
    emit_json({"state_dir": str(directory), "stopped": stopped})


@task(help={
    "state-dir": STATE_DIR_HELP,
    "spec": flag_help("spec.path", after="; its scheduler is judged against the API server's version"),
})
@user_errors
def status(c, state_dir=None, spec=None):
    """Print whether the cluster's processes run and the API server is ready, as JSON.

    With the version skew pair: the spec's scheduler beside the API server, judged by Kubernetes' policy."""
    decided = cluster_inputs.status_inputs(c, state_dir_flag=state_dir, spec=spec)
    directory = decided.state_dir
    control_plane = cluster_mod.status(directory)
    report = control_plane.as_dict()
    if control_plane.running or control_plane.version:
        report["version_skew"] = apply.skew_pair(decided.spec_path, control_plane.version, decided.cache_dir)
    node_report = node_mod.status(directory)
    if node_report:
        report["node"] = node_report
        report["running"] = control_plane.running and node_report["running"]
    emit_json(report)


@task(iterable=["ref"], help={
    "ref": "an image of the local Docker engine, an OCI layout directory or an archive (repeatable; "
           "invoke has no optional positional arguments, so also: `inv cluster.load -- REF...`)",
    "spec": "load the spec's scheduler image and, when referenceExtender is enabled, the extender image",
    "state-dir": STATE_DIR_HELP,
    "dist": flag_help("paths.dist_dir", after="; where --spec's image layout is read"),
})
@user_errors
def load(c, ref=None, spec=None, state_dir=None, dist=None):
    """Import built images into the node's containerd (like `kind load`); nothing is pulled."""
    remainder = str(getattr(c, "remainder", "") or "").split()  # `inv cluster.load -- REF...`
    inputs = cluster_inputs.load_inputs(c, refs=[*(ref or []), *remainder], spec=spec, state_dir_flag=state_dir,
                                        dist=dist)
    directory, pairs = inputs.state_dir, inputs.images
    ctd_dir = directory / "node" / "containerd"
    with phase("cluster load", f"{len(pairs)} image(s)"):
        loaded = [load_mod.load(ctd_dir, ref, name) for ref, name in pairs]
    emit("\n".join(loaded))


ns = Collection("cluster", up, down, status, load)
