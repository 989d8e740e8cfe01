"""The Indexed Job that runs bench.perf's shards on a cluster, judged as the other renders are
(tests/unit/config/test_render_judges.py): kubeconform -strict against the release's own OpenAPI and
kube-score with no CRITICAL finding but the shipped, documented exceptions. Each judge has a planted fault
it catches. The judges are real tools built from the Go module proxy (once, cached)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from bench.perf import job, shards
from scheduler_build import settings
from scheduler_build.config import linters, schemas
from scheduler_build.errors import UserError

K8S = "v1.36.3"
PLAN = job.JobPlan("bench-perf-20261128t0600", "bench", "127.0.0.1:5000/acme/perf-harness@sha256:" + "a" * 64,
                   count=2, cpus=2, memory="4Gi", workloads="500Nodes", variants="vanilla,spec", repeats=3,
                   deadline=7200, ttl=600)


def test_one_indexed_job_whose_completion_index_is_the_shard_and_whose_pods_are_guaranteed():
    found, deny = job.render(PLAN)
    spec = found["spec"]
    assert (found["kind"], spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Job", "Indexed", 2, 2)
    assert spec["backoffLimitPerIndex"] == 1 and spec["template"]["spec"]["restartPolicy"] == "Never"
    (container,) = spec["template"]["spec"]["containers"]
    requests, limits = container["resources"]["requests"], container["resources"]["limits"]
    assert requests == limits and requests["cpu"] == "2" and requests["memory"] == "4Gi"  # Guaranteed QoS
    assert container["args"][:2] == ["--count", "2"] and container["command"] == [job.RUNNER]
    # index K runs shard K + 1: the numbering of `bench.perf --shard` and the CI matrix
    assert [job.shard_of(k, 2) for k in range(2)] == ["1/2", "2/2"]
    assert [shards.parse(job.shard_of(k, 3)) for k in range(3)] == [shards.Shard(i, 3) for i in (1, 2, 3)]
    with pytest.raises(UserError, match="JOB_COMPLETION_INDEX 2: outside 0..1"):
        job.shard_of(2, 2)
    assert deny["kind"] == "NetworkPolicy" and deny["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in deny["spec"] and "egress" not in deny["spec"]  # nothing allowed


def test_a_job_whose_caller_was_killed_outright_is_ended_and_removed_by_the_cluster():
    # SIGKILL leaves no handler to delete the Job: the deadline (--timeout) ends it, the TTL removes it.
    spec = job.render(PLAN)[0]["spec"]
    assert (spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (7200, 600)
    kept = job.render(PLAN.__class__(**{**PLAN.__dict__, "deadline": None, "ttl": None}))[0]["spec"]  # --keep
    assert "activeDeadlineSeconds" not in kept and "ttlSecondsAfterFinished" not in kept


@pytest.mark.parametrize("change,words", [
    ({"cpus": 0}, "--cpus 0: whole CPUs"),
    ({"count": 0}, "--parallel 0"),
    ({"image": "127.0.0.1:5000/acme/perf-harness:latest"}, "not pinned by digest"),
])
def test_bad_plans_are_one_line(change, words):
    with pytest.raises(UserError, match=words):
        job.render(PLAN.__class__(**{**PLAN.__dict__, **change}))


def test_kubeconform_passes_the_job_and_catches_a_planted_fault():
    objects = job.render(PLAN)
    assert schemas.check(objects, K8S, settings.cache_dir()) == []
    broken = copy.deepcopy(objects)
    broken[0]["spec"]["completionsMode"] = "Indexed"  # a misspelt field: -strict refuses it
    (problem,) = schemas.check(broken, K8S, settings.cache_dir())
    assert problem.startswith("Job bench-perf-20261128t0600") and "completionsMode" in problem


def test_kube_score_finds_nothing_but_the_documented_exceptions_and_catches_a_planted_fault(tmp_path: Path):
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump_all(job.render(PLAN)))
    assert linters.unexcused(linters.kube_score([manifest], settings.cache_dir())) == []
    broken = job.render(PLAN)
    del broken[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    manifest.write_text(yaml.safe_dump_all(broken))
    found = linters.unexcused(linters.kube_score([manifest], settings.cache_dir()))
    assert any(f.check == "container-resources" and "Memory limit" in f.summary for f in found), found
