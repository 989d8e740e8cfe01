"""Fixtures of the end-to-end tests: one real control plane per session.

etcd (Debian's) and a kube-apiserver compiled by our own hermetic build run as
local processes for the whole session; each test gets its own namespace, its own
Nodes (deleted afterwards, so node counts are exact) and its own schedulers with
their own schedulerName. Nothing here is mocked.
"""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path

import pytest

_counter = itertools.count()


@pytest.fixture(scope="session")
def built_apiserver(built_scheduler, tmp_path_factory):
    """kube-apiserver of exactly the scheduler's version (same patch), built once per session."""
    from scheduler_build.build import pipeline as build
    from scheduler_build.inputs.build import default_request

    dist = tmp_path_factory.mktemp("dist-apiserver")
    request = default_request(k8s_version=built_scheduler.info.kubernetes.version, component="kube-apiserver",
                              dist_dir=dist, pull=False)
    return build.run(request)


@pytest.fixture(scope="session")
def control_plane(built_apiserver, tmp_path_factory):
    """A running cluster (scheduler_build.cluster.controlplane.ClusterState), torn down at the end."""
    from scheduler_build.cluster import controlplane as cluster
    from scheduler_build.cluster import processes
    from scheduler_build import settings

    state_dir = tmp_path_factory.mktemp("cluster")
    state = cluster.up(built_apiserver.binary, state_dir, etcd=settings.default("cluster.etcd"), timeout=300)
    yield state
    final = cluster.load_state(state_dir) or state
    cluster.down(state_dir)
    leftover = [r.name for r in final.processes.values() if processes.alive(r)]
    assert not leftover, f"processes left running after cluster.down: {leftover}"
    assert not Path(state_dir).exists()


@pytest.fixture(scope="session")
def kube(control_plane):
    """An admin ApiClient of the kubernetes Python client."""
    from testkit import kubeobjects as kobj

    return kobj.api_client(control_plane.admin_kubeconfig)


@pytest.fixture
def unique():
    """A short unique suffix for names of this test."""
    return f"{next(_counter)}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def namespace(kube, unique):
    """A fresh namespace; its pods are force-deleted afterwards (no kubelet to finish a graceful delete).

    The namespace itself stays (no namespace controller runs to finalize its deletion)."""
    from testkit import kubeobjects as kobj

    name = f"e2e-{unique}"
    kobj.ensure_namespace(kube, name)
    yield name
    kobj.force_delete_pods(kube, name)


@pytest.fixture
def nodes(kube):
    """Factory: nodes(bodies) creates Nodes; all are deleted after the test."""
    from testkit import kubeobjects as kobj

    created: list[str] = []

    def make(bodies):
        names = kobj.create_nodes(kube, bodies)
        created.extend(names)
        return names

    yield make
    kobj.delete_nodes(kube, created)


@pytest.fixture
def schedulers(built_scheduler, tmp_path):
    """Factory: schedulers(config, name=..., binary=...) starts kube-scheduler; all stop afterwards."""
    from testkit import e2e

    started = []

    def start(config, name=None, binary=None, **kwargs):
        run = e2e.start_scheduler(binary or built_scheduler.binary, config, tmp_path,
                                  name or f"sched{len(started)}", **kwargs)
        started.append(run)
        return run

    yield start
    for run in started:
        run.stop()
    for run in started:
        assert not run.alive(), f"scheduler {run.name} still running after stop"


@pytest.fixture(scope="session")
def built_debuggable_example(tmp_path_factory):
    """`inv build --spec examples/underlay/scheduler.yaml --debuggable`: the example with the recorder
    (docs/explain.md), through the CLI, once per session."""
    import json
    import subprocess
    import sys

    from scheduler_build.build.info import BuildInfo
    from scheduler_build.build.pipeline import BuildResult

    repo = Path(__file__).resolve().parents[2]
    dist = tmp_path_factory.mktemp("debuggable-dist")
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--spec", str(repo / "examples/underlay/scheduler.yaml"),
         "--debuggable", "--dist", str(dist), "--no-pull", "--json"],
        cwd=repo, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    info = json.loads(done.stdout)
    binary = Path(info["binary"]["path"])
    return BuildResult(binary=binary, build_info=binary.parent / "build-info.json", info=BuildInfo.from_dict(info))
