"""cluster: a local etcd + kube-apiserver control plane for end-to-end runs."""

import json as json_lib
from pathlib import Path

from invoke import Collection, task

from scheduler_build.cluster import controlplane as cluster_mod
from scheduler_build import settings
from scheduler_build.progress import phase
from scheduler_build.tasks._common import emit, user_errors


def resolve_state_dir(cfg, flag=None) -> Path:
    """cluster.state_dir, else <cache>/cluster."""
    configured = settings.get(cfg, "cluster.state_dir", flag)
    return Path(configured).expanduser().resolve() if configured else settings.cache_dir(cfg) / "cluster"


def apiserver_binary(cfg, apiserver=None, k8s_version=None) -> Path:
    """An explicit binary (flag or cluster.apiserver), else our own hermetic build of kube-apiserver."""
    explicit = settings.get(cfg, "cluster.apiserver", apiserver)
    if explicit:
        return Path(explicit).expanduser()
    from scheduler_build.build import pipeline as build_stage

    request = build_stage.BuildRequest(
        k8s_version=settings.get(cfg, "k8s.version", k8s_version),
        component="kube-apiserver",
        builder_image=settings.get(cfg, "builder.image"),
        pull=bool(settings.get(cfg, "builder.pull")),
        goroot=settings.get(cfg, "builder.goroot"),
        dist_dir=Path(settings.get(cfg, "paths.dist_dir")),
        cache_dir=settings.cache_dir(cfg),
        gocache_volume=settings.get(cfg, "build.gocache_volume"),
    )
    return build_stage.run(request).binary


@task(help={
    "k8s-version": "version of the kube-apiserver to build and run (default: k8s.version)",
    "apiserver": "use this kube-apiserver binary instead of building one (default: cluster.apiserver)",
    "etcd": "etcd binary (default: cluster.etcd = /usr/bin/etcd, Debian's etcd-server)",
    "state-dir": "certificates, kubeconfigs, data, logs and pids (default: cluster.state_dir, else <cache>/cluster)",
    "timeout": "seconds to wait for each process to become ready (default: cluster.timeout)",
    "json": "print the cluster's state as JSON instead of the admin kubeconfig path",
})
@user_errors
def up(c, k8s_version=None, apiserver=None, etcd=None, state_dir=None, timeout=None, json=False):
    """Start etcd and kube-apiserver on 127.0.0.1 with generated certificates and RBAC."""
    cfg = c.config
    directory = resolve_state_dir(cfg, state_dir)
    binary = apiserver_binary(cfg, apiserver, k8s_version)
    with phase("cluster up", str(directory)):
        state = cluster_mod.up(
            binary, directory,
            etcd=settings.get(cfg, "cluster.etcd", etcd),
            timeout=float(settings.get(cfg, "cluster.timeout", timeout)),
        )
    emit(state.to_json() if json else state.admin_kubeconfig)


@task(help={
    "state-dir": "the cluster's state directory (default: cluster.state_dir, else <cache>/cluster)",
})
@user_errors
def down(c, state_dir=None):
    """Stop the cluster's processes and remove its state directory (nothing is left behind)."""
    directory = resolve_state_dir(c.config, state_dir)
    with phase("cluster down", str(directory)):
        stopped = cluster_mod.down(directory)
    emit(json_lib.dumps({"state_dir": str(directory), "stopped": stopped}, sort_keys=True))


@task(help={
    "state-dir": "the cluster's state directory (default: cluster.state_dir, else <cache>/cluster)",
})
@user_errors
def status(c, state_dir=None):
    """Print whether the cluster's processes run and the API server is ready, as JSON."""
    emit(json_lib.dumps(cluster_mod.status(resolve_state_dir(c.config, state_dir)), indent=2, sort_keys=True))


ns = Collection("cluster", up, down, status)
