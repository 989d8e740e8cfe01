"""cluster: a local etcd + kube-apiserver control plane for end-to-end runs."""

from pathlib import Path

from invoke import Collection, task

from scheduler_build import settings
from scheduler_build.build import pipeline as build_stage
from scheduler_build.cluster import controlplane as cluster_mod
from scheduler_build.progress import phase
from scheduler_build.tasks._common import describe, emit, emit_json, option, user_errors


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
    request = build_stage.BuildRequest(
        k8s_version=option(c, "k8s.version", k8s_version),
        component="kube-apiserver",
        builder_image=option(c, "builder.image"),
        pull=option(c, "builder.pull"),
        goroot=option(c, "builder.goroot"),
        dist_dir=Path(option(c, "paths.dist_dir")),
        cache_dir=settings.cache_dir(c.config),
        gocache_volume=option(c, "build.gocache_volume"),
    )
    return build_stage.run(request).binary


@task(help={
    "k8s-version": f"version of the kube-apiserver to build and run ({describe('k8s.version')})",
    "apiserver": f"use this kube-apiserver binary instead of building one ({describe('cluster.apiserver', 'build it')})",
    "etcd": f"etcd binary ({describe('cluster.etcd')})",
    "state-dir": f"certificates, kubeconfigs, data, logs and pids ({STATE_DIR_DEFAULT})",
    "timeout": f"seconds to wait for each process to become ready ({describe('cluster.timeout')})",
    "json": "print the cluster's state as JSON instead of the admin kubeconfig path",
})
@user_errors
def up(c, k8s_version=None, apiserver=None, etcd=None, state_dir=None, timeout=None, json=False):
    """Start etcd and kube-apiserver on 127.0.0.1 with generated certificates and RBAC."""
    directory = resolve_state_dir(c, state_dir)
    binary = apiserver_binary(c, apiserver, k8s_version)
    with phase("cluster up", str(directory)):
        state = cluster_mod.up(
            binary, directory,
            etcd=option(c, "cluster.etcd", etcd),
            timeout=float(option(c, "cluster.timeout", timeout)),
        )
    emit(state.to_json() if json else state.admin_kubeconfig)


@task(help={
    "state-dir": f"the cluster's state directory ({STATE_DIR_DEFAULT})",
})
@user_errors
def down(c, state_dir=None):
    """Stop the cluster's processes and remove its state directory (nothing is left behind)."""
    directory = resolve_state_dir(c, state_dir)
    with phase("cluster down", str(directory)):
        stopped = cluster_mod.down(directory)
    emit_json({"state_dir": str(directory), "stopped": stopped})


@task(help={
    "state-dir": f"the cluster's state directory ({STATE_DIR_DEFAULT})",
})
@user_errors
def status(c, state_dir=None):
    """Print whether the cluster's processes run and the API server is ready, as JSON."""
    emit_json(cluster_mod.status(resolve_state_dir(c, state_dir)))


ns = Collection("cluster", up, down, status)
