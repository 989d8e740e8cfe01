"""compare and snapshot.*: replay a cluster snapshot through two schedulers and diff the placements
(docs/compare.md). The tasks decide the inputs (inputs/compare.py); flows/compare.py runs the sides."""

from __future__ import annotations

from invoke import Collection, task

from scheduler_build import kubeclient
from scheduler_build.atomic import write_atomic
from scheduler_build.commands._common import emit, flag_help, user_errors
from scheduler_build.compare import generate as generate_mod
from scheduler_build.compare import take as take_mod
from scheduler_build.flows import compare as compare_flow
from scheduler_build.inputs.compare import compare_inputs, generate_inputs, take_inputs


@task(auto_shortflags=False, help={  # with this many flags invoke's generated short ones collide
    "snapshot": "the snapshot file (snapshot.take, snapshot.generate, or kube-scheduler-simulator's export)",
    "a": "side a: a build spec (its compare build is made as needed), or a kube-scheduler binary with --a-config",
    "b": "side b: as -a",
    "a-config": "side a's KubeSchedulerConfiguration when -a is a binary",
    "b-config": "side b's KubeSchedulerConfiguration when -b is a binary",
    "profile": "the profile (schedulerName) compared; default: each side's first",
    "pending-only": "keep the snapshot's bound pods where they are; schedule only its pending pods",
    "json": "also write the report as JSON (docs/compare.schema.json) to this file",
    "chart": "also write a PNG of each node's utilisation, a beside b, to this file",
    "apiserver": flag_help("cluster.apiserver"),
    "timeout": flag_help("cluster.timeout"),
    "dist": flag_help("paths.dist_dir", after="; where each spec side's compare build and the kube-apiserver go"),
})
@user_errors
def compare(c, snapshot, a=None, b=None, a_config=None, b_config=None, profile=None, pending_only=False, json=None,
            chart=None, apiserver=None, timeout=None, dist=None):
    """What changes if I ship this build: replay SNAPSHOT through side a and side b, each on a fresh API server."""
    inputs = compare_inputs(c, snapshot=snapshot, a=a, b=b, a_config=a_config, b_config=b_config, profile=profile,
                            pending_only=pending_only, json_out=json, chart_out=chart, apiserver=apiserver,
                            timeout=timeout, dist=dist)
    compare_flow.run(inputs, emit)


@task(auto_shortflags=False, help={
    "kubeconfig": "the cluster to read; default: the local control plane of `inv cluster.up`",
    "out": "the snapshot file to write",
    "anonymize": "replace names and label values with stable hashes (for a bug report)",
    "state-dir": flag_help("cluster.state_dir"),
})
@user_errors
def take(c, out=None, kubeconfig=None, anonymize=False, state_dir=None):
    """Save what scheduling reads of a cluster (nodes, pods, their scheduling objects) to a snapshot file."""
    inputs = take_inputs(c, kubeconfig=kubeconfig, out=out, anonymize=anonymize, state_dir_flag=state_dir)
    shot = take_mod.take(kubeclient.from_kubeconfig(inputs.kubeconfig), inputs.anonymize)
    write_atomic(inputs.out, shot.to_json())
    emit(str(inputs.out))


@task(auto_shortflags=False, help={
    "nodes": "how many nodes",
    "pods": "how many pods (all pending)",
    "out": "the snapshot file to write",
    "pod-label": "KEY=VALUE[:FRACTION]: that share of the pods carries the label (repeatable)",
    "node-shapes": f"node sizes: {', '.join(generate_mod.NODE_MIXES)} (default mixed)",
    "pod-mix": f"pod kinds: {', '.join(generate_mod.POD_MIXES)} (default mixed)",
    "seed": "the random seed (the same flags write the same file)",
}, iterable=["pod_label"])
@user_errors
def generate(c, nodes, pods, out=None, pod_label=None, node_shapes=None, pod_mix=None, seed=1):
    """Write a synthetic snapshot: NODES nodes of a few shapes, PODS pending pods of a few kinds."""
    request, path = generate_inputs(nodes=nodes, pods=pods, out=out, pod_label=pod_label, node_shapes=node_shapes,
                                    pod_mix=pod_mix, seed=seed)
    write_atomic(path, generate_mod.generate(request).to_json())
    emit(str(path))


ns = Collection("snapshot", take, generate)
