"""`inv bench.perf --on KUBECONFIG --parallel N`: the shards as one Kubernetes Indexed Job.

Decided first (commands.py: the kubeconfig read and checked, the registry, the counts), then: the harness
compiled (harness.py, cached) and etcd built (cached) as a local run has them; every shard's cells planned
(shard_plan.py) and baked into the harness image (harness_image.py), pushed to the registry by digest;
the Job and its NetworkPolicy rendered (job.py) and created with the kubernetes client; the Job followed
(follow.py) with a progress line on stderr at least every 10 s; each completed shard's raw file made from
its pod's log and kept beside the output (`<raw>.shards/`); the shards merged by bench.merge's code; the
Job deleted unless --keep. Ctrl-C and SIGTERM (scheduler_build/signals.py makes SIGTERM take Ctrl-C's
path) delete the Job this run created, --keep or not. A pod that cannot pull the image ends the run at
once, in one line. An index that failed past backoffLimitPerIndex leaves its shard out: the merge names
it missing and writes no merged file (the finished shards' files stay, to merge with a local `--shard`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from bench import record
from bench.perf import follow, harness, harness_image, job, merge, report, shard_plan, variants
from scheduler_build import platforms
from scheduler_build.atomic import write_atomic
from scheduler_build.config.render import dump
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase
from scheduler_build.resolve import vocabulary
from scheduler_build.safeyaml import load_yaml
from scheduler_build.spec import Spec
from testkit import etcd

POLL = 5.0  # seconds between looks at the Job; a progress line every other look at most 10 s apart
PROGRESS = 10.0
TTL = 600  # seconds a finished Job stays when no caller removed it (killed outright): the cluster removes it then


@dataclass(frozen=True)
class ClusterInputs:
    """What --on decides before anything is built: where, how many, how big, and what to do after."""

    kubeconfig: Path
    parallel: int
    namespace: str
    cpus: int
    memory: str
    render_only: Path | None
    keep: bool
    timeout: float  # seconds the Job may take before the run gives up (and deletes it)


def _prepared(spec: Spec, workloads: list[variants.Workload], chosen: list[str], repeats: int, count: int,
              cache_dir: Path, gocache_volume: str, builder_image: str, pull: bool) -> tuple[dict, dict, Any, list]:
    """(the runner's plan, the raw file's meta, the harness, the image's entries)."""
    def known(module_dir: Path) -> dict:
        config_file = variants.misc_config(module_dir)
        return variants.check_known(workloads, config_file.read_text(), str(config_file))

    h = harness.prepare(spec, cache_dir, gocache_volume, builder_image, pull, check=known)
    thresholds = known(h.module_dir)
    with phase("etcd", "at the version hack/lib/etcd.sh pins"):
        etcd_bin = etcd.binary(h.module_dir, cache_dir)
    upstream = variants.misc_config(h.module_dir)
    image_config = f"{shard_plan.module_root(h.kubernetes)}/{upstream.relative_to(h.module_dir)}"
    configs = {w.label: (upstream.read_text(), image_config) for w in workloads}
    files: dict[str, bytes] = {}
    labels = variants.pod_labels(spec)
    if labels and not any(w.case.endswith(variants.LABELLED) for w in workloads):  # as run._with_labelled
        extra = variants.labelled(workloads[0])
        case = next(c for c in load_yaml(upstream.read_text()) if c.get("name") == workloads[0].case)
        pod_path = f"{shard_plan.CELLS}/labelled/pod.yaml"
        cases, pod = variants.labelled_files(upstream.read_text(), (h.misc_dir / case["defaultPodTemplatePath"]).read_text(),
                                             workloads[0].case, labels, Path(pod_path))
        files[pod_path] = dump(pod).encode()  # as run._labelled_config writes them
        files[f"{shard_plan.CELLS}/labelled/performance-config.yaml"] = dump(cases).encode()
        configs[extra.label] = (dump(cases), f"{shard_plan.CELLS}/labelled/performance-config.yaml")
        thresholds[extra.label] = None
        workloads = [*workloads, extra]
    has_gate = variants.GATE in vocabulary.feature_gates(h.kubernetes, cache_dir)
    args = {"workloads": ",".join(w.label for w in workloads), "variants": ",".join(chosen), "repeats": repeats}
    body, planned = shard_plan.plan(h, spec, workloads, configs, chosen, repeats, count, has_gate, args)
    files.update(planned)
    key = {"binary": shard_plan.BINARY, "key": h.binary.parent.name, "compiled": h.compiled, "compile_seconds": h.compile_seconds}
    meta = {"spec": record.shown(spec.path), "spec_sha256": hashlib.sha256(Path(spec.path).read_bytes()).hexdigest(), "kubernetes": h.kubernetes,
            "variants": chosen, "repeats": repeats, "workloads": [w.label for w in workloads], "thresholds": thresholds,
            "plugin_names": list(h.plugin_names), "harness": key, "harnesses": {v: dict(key) for v in chosen},
            "runs_dir": "", "machine_before": {}, "machine_after": {}, "profiles": {},
            "notes": report.notes(spec, labels, chosen)}
    runner = harness_image.runner_binary(cache_dir)
    return body, meta, h, harness_image.entries(h, etcd_bin, runner, body, files)


def _plain(api: Any, obj: Any) -> dict:
    return api.api_client.sanitize_for_serialization(obj)


def apply(kube: Any, objects: list[dict]) -> None:
    """Create the Job and its NetworkPolicy (create, not apply: a Job of the same name is someone else's run)."""
    from kubernetes import client

    owner = None
    for obj in objects:
        ns = obj["metadata"]["namespace"]
        if obj["kind"] == "Job":
            created = client.BatchV1Api(kube).create_namespaced_job(ns, obj)
            owner = {"apiVersion": "batch/v1", "kind": "Job", "name": created.metadata.name, "uid": created.metadata.uid}
        elif obj["kind"] == "NetworkPolicy":  # owned by the Job: removed with it, by us or by its TTL
            obj = dict(obj, metadata=dict(obj["metadata"], **({"ownerReferences": [owner]} if owner else {})))
            client.NetworkingV1Api(kube).create_namespaced_network_policy(ns, obj)


def delete(kube: Any, name: str, namespace: str) -> None:
    """The Job (its pods with it: background propagation) and the NetworkPolicy this run created; gone is fine."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    for call in (lambda: client.BatchV1Api(kube).delete_namespaced_job(name, namespace, propagation_policy="Background"),
                 lambda: client.NetworkingV1Api(kube).delete_namespaced_network_policy(name, namespace)):
        try:
            call()
        except ApiException as e:
            if e.status != 404:
                raise
    log(f"    deleted job {namespace}/{name}")


def _look(kube: Any, name: str, namespace: str) -> tuple[dict, list[dict]]:
    from kubernetes import client

    batch, core = client.BatchV1Api(kube), client.CoreV1Api(kube)
    found = batch.read_namespaced_job(name, namespace)
    pods = core.list_namespaced_pod(namespace, label_selector=f"{job.LABEL}={name}").items
    return _plain(batch, found), [_plain(core, p) for p in pods]


def watch(kube: Any, name: str, namespace: str, count: int, timeout: float,
          look: Callable[..., tuple[dict, list[dict]]] = _look, sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.monotonic) -> tuple[follow.State, list[dict]]:
    """Follow the Job until it is over: (its last state, its pods). One line a pod cannot pull the image."""
    started, said = clock(), -PROGRESS
    while True:
        found, pods = look(kube, name, namespace)
        state = follow.observe(found, pods, count)
        if state.pull_error:
            raise UserError(state.pull_error, "push the image where the cluster can pull it (--registry), "
                            "or give the nodes the registry's credentials or CA")
        now = clock() - started
        if state.over:
            log("    " + state.line(name, count, now))
            return state, pods
        if now - said >= PROGRESS - POLL / 2:
            log("    " + state.line(name, count, now))
            said = now
        if now > timeout:
            raise UserError(f"job {namespace}/{name} ran over {timeout:.0f}s ({state.line(name, count, now)})",
                            "raise --timeout, or run fewer cells per shard (more --parallel)")
        sleep(POLL)


def collect(kube: Any, body: dict, meta: dict, head: dict, state: follow.State, pods: list[dict], out: Path,
            plugin_names: tuple[str, ...]) -> list[tuple[str, dict]]:
    """Each completed shard's raw file, made from its pod's log and written under `out` (name, raw)."""
    from kubernetes import client

    core = client.CoreV1Api(kube)
    collected = []
    for index in sorted(state.completed):
        pod = follow.succeeded_pod(pods, index)
        if pod is None:
            continue  # the merge names it missing
        name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
        text = core.read_namespaced_pod_log(name, ns, container="shard")
        where = f"pod {ns}/{name}"
        shard_head = dict(head, started=(pod.get("status") or {}).get("startTime") or head["started"],
                          machine=dict(head["machine"], node=(pod.get("spec") or {}).get("nodeName", ""), pod=name))
        raw = shard_plan.shard_raw(shard_plan.parse_block(text, where), body, shard_head, meta, plugin_names, where)
        path = out / f"shard-{index + 1}-of-{body['count']}.json"
        write_atomic(path, json.dumps(raw, indent=1, default=str) + "\n")
        collected.append((str(path), raw))
    return collected


def run_job(kube: Any, plan: job.JobPlan, timeout: float, keep: bool,
            then: Callable[[follow.State, list[dict]], Any] = lambda state, pods: (state, pods)) -> Any:
    """Create the Job, follow it to its end and call `then(state, pods)` (the collect: the pods' logs go with
    the Job); delete it afterwards unless `keep` (a failed run's Job too: its pods' logs say why), and always
    when interrupted (Ctrl-C, SIGTERM): a stopped run's Job is nobody's."""
    stopped = False
    try:  # from before the create: a signal between the Job's create and the NetworkPolicy's must delete it too
        apply(kube, job.render(plan))
        log(f"    created job {plan.namespace}/{plan.name}: {plan.count} shard(s), image {plan.image}")
        return then(*watch(kube, plan.name, plan.namespace, plan.count, timeout))
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (scheduler_build/signals.py)
        stopped = True
        raise
    finally:
        if stopped or not keep:
            delete(kube, plan.name, plan.namespace)


def render_only(plan: job.JobPlan, directory: Path) -> Path:
    """--render-only: the Job and its NetworkPolicy as one YAML file for GitOps; nothing is applied."""
    target = Path(directory) / f"{plan.name}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, yaml.safe_dump_all(job.render(plan), sort_keys=False))
    log(f"wrote {target} (nothing applied)")
    return target


def run_on(spec: Spec, workloads: list[variants.Workload], chosen: list[str], repeats: int, inputs: ClusterInputs,
           push: Callable[[harness_image.Built], str], cache_dir: Path, gocache_volume: str, builder_image: str,
           pull: bool, command: str, out: Path) -> dict | None:
    """The whole --on run: the merged raw file (None with --render-only, which writes the manifests instead)."""
    shard_plan.on_cluster_variants(chosen)
    body, meta, h, found = _prepared(spec, workloads, chosen, repeats, inputs.parallel, cache_dir, gocache_volume,
                                     builder_image, pull)
    image = push(harness_image.build(found, platforms.host_arch(), cache_dir))
    name = "bench-perf-" + time.strftime("%Y%m%dt%H%M%S").lower()
    kept = inputs.keep or inputs.render_only is not None  # their Jobs are collected by hand: no TTL
    plan = job.JobPlan(name, inputs.namespace, image, inputs.parallel, inputs.cpus, inputs.memory, body["workloads"],
                       body["variants"], repeats, deadline=max(1, int(inputs.timeout)), ttl=None if kept else TTL)
    if inputs.render_only is not None:
        render_only(plan, inputs.render_only)
        return None
    from scheduler_build import kubeclient

    kube = kubeclient.from_kubeconfig(inputs.kubeconfig)
    head = {"schema": record.SCHEMA, "task": merge.TASK, "command": command, "commit": record.commit(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"cpus": inputs.cpus, "memory": inputs.memory, "job": f"{inputs.namespace}/{name}"}}
    shard_dir = out.with_suffix(".shards")

    def collected_from(state: follow.State, pods: list[dict]) -> list[tuple[str, dict]]:
        if state.failed or state.condition:
            log(f"    job {name}: {state.condition or 'failed indexes'}; finished shards kept in {shard_dir}")
        return collect(kube, body, meta, head, state, pods, shard_dir, tuple(h.plugin_names))

    collected = run_job(kube, plan, inputs.timeout, inputs.keep, collected_from)
    if not collected:
        every = ", ".join(f"{k}/{inputs.parallel}" for k in range(1, inputs.parallel + 1))
        raise UserError(f"shard {every} missing (have none): no shard of job {name} finished",
                        f"see its pods' logs (--keep keeps the Job); `inv bench.perf --shard I/{inputs.parallel}` "
                        "runs one here")
    return merge.merge(collected, command)
