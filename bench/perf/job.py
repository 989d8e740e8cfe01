"""bench.perf's shards as one Kubernetes Indexed Job: the manifests (pure).

One `batch/v1` Job, `completionMode: Indexed`, `completions` = `parallelism` = the shard count: the pod
of completion index K runs shard K + 1 of N (shards.py numbers shards from 1, the Job's index from 0;
the runner reads JOB_COMPLETION_INDEX, which the Job controller sets). A shard that fails or is evicted
is retried by `backoffLimitPerIndex` on its own index, the others keep running; an index that fails
past it is a failed index, and the merge then names that shard missing. The pod asks for integer CPUs
and equal requests and limits (Guaranteed QoS): on a node whose kubelet runs the static CPU manager
each shard gets whole cores of its own, so the cells of different shards are comparable. Without the
static CPU manager the CPUs are a CFS quota on shared cores: the ratios to vanilla (made inside one
pod) still hold, the absolute pods/s of different shards are not comparable.

The pod needs no network (the harness runs its API server, etcd and scheduler in-process on
loopback): a NetworkPolicy denies it all ingress and egress. It writes only under /tmp (an emptyDir),
runs as a non-root user with a read-only root filesystem and no capabilities, and prints its shard's
raw file on stdout, which the caller collects from the pod's log.

A caller killed outright (SIGKILL, a lost machine) cannot delete its Job: `activeDeadlineSeconds` (the
run's --timeout) has the cluster end it, and `ttlSecondsAfterFinished` (unless --keep or --render-only)
has the cluster remove it once over; the NetworkPolicy is owned by the Job and goes with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_build.errors import UserError

RUNNER = "/perf-shard"  # the harness image's entrypoint: runs shard JOB_COMPLETION_INDEX + 1 of --count
USER = 65532  # the images' non-root user (scheduler_build/image/)
LABEL = "scheduler-build.io/bench-perf"


@dataclass(frozen=True)
class JobPlan:
    name: str  # the Job's name (also its pods' label value)
    namespace: str
    image: str  # by digest: every shard runs the same bytes
    count: int  # shards = completions = parallelism
    cpus: int  # whole CPUs per shard (request = limit)
    memory: str  # per shard (request = limit), e.g. "4Gi"
    workloads: str
    variants: str
    repeats: int
    backoff_per_index: int = 1  # retries of one shard
    scratch: str = "4Gi"  # ephemeral storage per shard (request = limit): etcd's data and the runs' files in /tmp
    deadline: int | None = None  # activeDeadlineSeconds: the cluster ends the Job even when its caller is gone
    ttl: int | None = None  # ttlSecondsAfterFinished: the cluster removes a finished Job no caller removed


def check(plan: JobPlan) -> None:
    """One line naming the value at fault (decided before anything is built or applied)."""
    if plan.count < 1:
        raise UserError(f"--parallel {plan.count}: must be at least 1", "e.g. --parallel 2")
    if plan.cpus < 1:
        raise UserError(f"--cpus {plan.cpus}: whole CPUs, at least 1",
                        "Guaranteed QoS with the static CPU manager pins whole cores: e.g. --cpus 2")
    if "@sha256:" not in plan.image:
        raise UserError(f"harness image {plan.image!r} is not pinned by digest", "push it and use REPO@sha256:...")


def _container(plan: JobPlan) -> dict:
    resources = {"cpu": str(plan.cpus), "memory": plan.memory, "ephemeral-storage": plan.scratch}
    return {
        "name": "shard", "image": plan.image, "imagePullPolicy": "IfNotPresent", "command": [RUNNER],
        "args": ["--count", str(plan.count), "--workloads", plan.workloads, "--variants", plan.variants,
                 "--repeats", str(plan.repeats)],
        # The Job controller sets JOB_COMPLETION_INDEX itself; naming it from the index annotation too makes
        # the template say which variable the runner reads (and holds on clusters that predate the variable).
        "env": [{"name": "TMPDIR", "value": "/tmp"},
                {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}],
        "resources": {"requests": dict(resources), "limits": dict(resources)},  # equal: Guaranteed QoS
        "securityContext": {"runAsNonRoot": True, "runAsUser": USER, "runAsGroup": USER,
                            "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }


def render(plan: JobPlan) -> list[dict]:
    """The Job and the NetworkPolicy that cuts its pods off the network."""
    check(plan)
    labels = {LABEL: plan.name}
    job = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": labels},
        "spec": {
            "completionMode": "Indexed", "completions": plan.count, "parallelism": plan.count,
            "backoffLimitPerIndex": plan.backoff_per_index,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            **({"activeDeadlineSeconds": plan.deadline} if plan.deadline else {}),
            **({"ttlSecondsAfterFinished": plan.ttl} if plan.ttl is not None else {}),
            "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                         "securityContext": {"runAsNonRoot": True, "runAsUser": USER, "runAsGroup": USER,
                                             "fsGroup": USER, "seccompProfile": {"type": "RuntimeDefault"}},
                         "containers": [_container(plan)],
                         "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": plan.scratch}}]},
            },
        },
    }
    deny = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": labels},
        "spec": {"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress", "Egress"]},
    }
    return [job, deny]


def shard_of(completion_index: int, count: int) -> str:
    """The `--shard` a pod of completion index K runs: K + 1 of count (the CI matrix's numbering)."""
    if not 0 <= completion_index < count:
        raise UserError(f"JOB_COMPLETION_INDEX {completion_index}: outside 0..{count - 1}", "run inside the Job")
    return f"{completion_index + 1}/{count}"
