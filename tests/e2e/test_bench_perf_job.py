"""bench.perf --on against a real control plane (etcd + kube-apiserver of our own build, tests/e2e/conftest.py):
what runs there without a kubelet. The Job is created with N completions, Indexed, and the index variable the
runner reads; SIGTERM of the caller while it follows the Job deletes the Job; --render-only writes manifests
kubeconform passes and creates nothing. The image is never pulled here (a digest no registry holds): no
kube-controller-manager makes pods and no kubelet runs them.

NEEDS A KUBELET (not here): pods running the harness image, ImagePullBackOff from a real pull, the shards'
logs, the merge of a real Job. That is the real-node run (`inv cluster.up --node`, docs/bench-perf.md), and
the pure parts of it are tests/unit/bench/test_perf_on_cluster.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bench.perf import job, on_cluster
from scheduler_build import settings
from scheduler_build.config import schemas

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
IMAGE = "127.0.0.1:1/acme/kube-scheduler/perf-harness@sha256:" + "b" * 64


def _plan(namespace: str, name: str, count: int = 2) -> job.JobPlan:
    return job.JobPlan(name, namespace, IMAGE, count=count, cpus=1, memory="1Gi", workloads="SchedulingBasic/500Nodes",
                       variants="vanilla", repeats=1)


def _job(kube, namespace: str, name: str):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    try:
        return client.BatchV1Api(kube).read_namespaced_job(name, namespace)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def test_the_job_is_created_indexed_with_n_completions_and_the_index_variable(kube, namespace, unique):
    plan = _plan(namespace, f"bench-perf-{unique}", count=3)
    on_cluster.apply(kube, job.render(plan))
    try:
        found = _job(kube, namespace, plan.name)
        assert (found.spec.completion_mode, found.spec.completions, found.spec.parallelism) == ("Indexed", 3, 3)
        assert found.spec.backoff_limit_per_index == 1
        (container,) = found.spec.template.spec.containers
        index = [e for e in container.env if e.name == "JOB_COMPLETION_INDEX"]
        assert index and index[0].value_from.field_ref.field_path == \
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        assert container.args[:2] == ["--count", "3"] and container.image == IMAGE
        assert container.resources.requests == container.resources.limits  # Guaranteed QoS, as the API stored it
    finally:
        on_cluster.delete(kube, plan.name, namespace)
    assert _job(kube, namespace, plan.name) is None


CALLER = """
import sys
from pathlib import Path
from scheduler_build import signals, kubeclient
signals.install()
from bench.perf import job, on_cluster
plan = job.JobPlan(sys.argv[2], sys.argv[3], sys.argv[4], count=2, cpus=1, memory="1Gi",
                   workloads="SchedulingBasic/500Nodes", variants="vanilla", repeats=1)
try:
    on_cluster.run_job(kubeclient.from_kubeconfig(sys.argv[1]), plan, timeout=600, keep=True)
except KeyboardInterrupt as exc:
    sys.exit(signals.report(exc, "the Job this run created is deleted"))
"""


def test_sigterm_of_the_caller_deletes_the_job_it_created(control_plane, kube, namespace, unique):
    name = f"bench-perf-{unique}"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    caller = subprocess.Popen([sys.executable, "-c", CALLER, str(control_plane.admin_kubeconfig), name, namespace, IMAGE],
                              env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while _job(kube, namespace, name) is None:  # following it: no pods will come (no controller, no kubelet)
            assert caller.poll() is None, caller.stderr.read()
            assert time.monotonic() < deadline, "the caller never created its Job"
            time.sleep(0.2)
        caller.send_signal(signal.SIGTERM)
        _, err = caller.communicate(timeout=60)
    finally:
        if caller.poll() is None:
            caller.kill()
    assert caller.returncode == 143, err
    assert _job(kube, namespace, name) is None, err  # caught once: a SIGTERM between the Job's create and the try
    assert f"deleted job {namespace}/{name}" in err and "terminated (SIGTERM)" in err


def test_render_only_writes_manifests_kubeconform_passes_and_applies_nothing(kube, namespace, unique, tmp_path,
                                                                               control_plane):
    plan = _plan(namespace, f"bench-perf-{unique}")
    written = on_cluster.render_only(plan, tmp_path / "out")
    objects = list(yaml.safe_load_all(written.read_text()))
    assert [o["kind"] for o in objects] == ["Job", "NetworkPolicy"]
    version = control_plane.version  # the API server's own release: its OpenAPI judges the manifests
    assert schemas.check(objects, version, settings.cache_dir()) == []
    assert _job(kube, namespace, plan.name) is None
