"""The debuggable example build on the real control plane, read back by `explain` (docs/explain.md).

Three Nodes: one whose underlay-IP quota is 0, one with room, one without the quota label
(the plugin's default quota, fewer CPUs). An opted-in pod binds and `explain` names every
node, UnderlayIPLimit as what removed the full one, the scores, and the node the pod is on.
A pod that fits nowhere stays Pending and `explain` names each node's rejecting plugin. The
same pods, one at a time, on the same nodes, land where the release build puts them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from pathlib import Path

import pytest

from testkit import e2e
from testkit import kubeobjects as kobj

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

CAPACITY_LABEL = "underlay.example.com/capacity"  # the plugin's defaults (args.go)
UNDERLAY = {"underlay.example.com/ip": "true"}
OPT_IN = "scheduler-build.io/explain"  # examples/underlay/scheduler.yaml debuggable.podLabel
TIMEOUT = 180


def _config(name: str, kubeconfig: str) -> dict:
    return e2e.scheduler_config(name, kubeconfig,
                                plugins={"multiPoint": {"enabled": [{"name": "UnderlayIPLimit", "weight": 3}]}})


def _nodes(nodes, prefix: str) -> dict[str, str]:
    bodies = {
        "full": kobj.node_body(f"{prefix}-full", labels={CAPACITY_LABEL: "0"}),
        "room": kobj.node_body(f"{prefix}-room", cpu="32", memory="64Gi", labels={CAPACITY_LABEL: "1"}),
        "nolabel": kobj.node_body(f"{prefix}-nolabel", cpu="8", memory="16Gi"),
    }
    nodes(list(bodies.values()))
    return {role: body["metadata"]["name"] for role, body in bodies.items()}


def _explain(kubeconfig: str, namespace: str, pod: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scheduler_build", "explain", pod, "-n", namespace,
                           "--kubeconfig", kubeconfig, *extra], capture_output=True, text=True, timeout=120)


def _pod(kube, namespace: str, name: str, scheduler: str, cpu: str, opt_in: bool = True) -> None:
    labels = {**UNDERLAY, **({OPT_IN: "true"} if opt_in else {})}
    kobj.create_pods(kube, namespace, [kobj.pod_body(name, scheduler, labels=labels, cpu=cpu, memory="256Mi")])


def _pod_dict(kube, namespace: str, name: str) -> dict:
    from kubernetes import client as k

    resp = k.CoreV1Api(kube).read_namespaced_pod(name, namespace, _preload_content=False)
    return json.loads(resp.data)


def _keep(kube, namespace: str, name: str, as_name: str) -> None:
    """With SB_EXPLAIN_FIXTURES=DIR, the pod as recorded: the unit tests' fixtures come from this run."""
    where = os.environ.get("SB_EXPLAIN_FIXTURES")
    if where:
        pod = _pod_dict(kube, namespace, name)
        for key in ("managedFields", "resourceVersion", "creationTimestamp"):
            pod["metadata"].pop(key, None)
        (Path(where) / as_name).write_text(json.dumps(pod, indent=1, sort_keys=True) + "\n")


def test_explain_bound_and_pending_pods(control_plane, kube, namespace, nodes, schedulers,
                                        built_debuggable_example, unique):
    from scheduler_build.explain import record

    ours = f"sb-debug-{unique}"
    names = _nodes(nodes, f"dbg-{unique}")
    run = schedulers(_config(ours, control_plane.scheduler_kubeconfig), binary=built_debuggable_example.binary)
    run.wait_healthy()
    admin = control_plane.admin_kubeconfig

    _pod(kube, namespace, "p1", ours, cpu="1")
    placed = kobj.wait_bound(kube, namespace, 1, TIMEOUT)
    out = _explain(admin, namespace, "p1", "--json", "--top", "3")  # the record came with the binding
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["recorded"], doc
    assert doc["chosenNode"] == placed["p1"] == names["room"], doc
    named = {n["node"] for n in doc["topNodes"]} | {f["node"] for f in doc["filteredNodes"]}
    assert named == set(names.values()), doc
    assert {(f["node"], f["plugin"]) for f in doc["filteredNodes"]} == {(names["full"], "UnderlayIPLimit")}, doc
    for node in doc["topNodes"]:
        assert node["plugins"] and all(p["raw"] is not None and p["weighted"] is not None for p in node["plugins"]), node
    totals = [n["total"] for n in doc["topNodes"]]
    assert len(set(totals)) == len(totals), f"the test's nodes must score distinctly: {totals}"
    # The record agrees with the scheduler's own choice: its best-scored node is the one the pod is bound to.
    assert doc["topNodes"][0]["node"] == doc["chosenNode"] and totals == sorted(totals, reverse=True), doc
    text = _explain(admin, namespace, "p1").stdout
    assert f"bound to {names['room']}" in text and "UnderlayIPLimit" in text, text
    _keep(kube, namespace, "p1", "bound.json")

    _pod(kube, namespace, "p2", ours, cpu="16")
    pending = kobj.wait_until(lambda: (d := record.explain(_pod_dict(kube, namespace, "p2")))["recorded"] and d,
                              TIMEOUT, what="a record on the Pending pod p2")
    assert pending["outcome"] == "unschedulable" and not pending["pod"]["nodeName"], pending
    rejecting = {f["node"]: f["plugin"] for f in pending["filteredNodes"]}
    assert rejecting == {names["full"]: "UnderlayIPLimit", names["room"]: "UnderlayIPLimit",
                         names["nolabel"]: "NodeResourcesFit"}, pending
    text = _explain(admin, namespace, "p2").stdout
    assert "unschedulable" in text and "postfilter: DefaultPreemption" in text, text
    _keep(kube, namespace, "p2", "pending.json")

    _pod(kube, namespace, "p3", ours, cpu="1", opt_in=False)  # negative control: not opted in, not recorded
    kobj.wait_bound(kube, namespace, 2, TIMEOUT)
    assert not record.explain(_pod_dict(kube, namespace, "p3"))["recorded"]
    out = _explain(admin, namespace, "p3")
    assert out.returncode == 0 and len(out.stdout.strip().splitlines()) == 1 and "--debuggable" in out.stdout, out


SEQUENCE = [("s0", "2"), ("s1", "1"), ("s2", "3"), ("s3", "1"), ("s4", "2"), ("s5", "500m")]


def _place_in_order(kube, namespace: str, scheduler: str) -> dict[str, str]:
    """The pods one at a time, each bound before the next: the same inputs give the same state."""
    for k, (name, cpu) in enumerate(SEQUENCE):
        labels = {**UNDERLAY, OPT_IN: "true"} if k % 2 == 0 else {OPT_IN: "true"}
        kobj.create_pods(kube, namespace, [kobj.pod_body(name, scheduler, labels=labels, cpu=cpu, memory="512Mi")])
        kobj.wait_bound(kube, namespace, k + 1, TIMEOUT)
    return {n: p.spec.node_name for n, p in kobj.pods_by_name(kube, namespace).items()}


def test_debuggable_places_pods_where_the_release_build_does(control_plane, kube, nodes, schedulers, unique,
                                                             built_example_scheduler, built_debuggable_example):
    from scheduler_build.explain import record

    prefix = f"same-{unique}"
    nodes([kobj.node_body(f"{prefix}-a", cpu="32", memory="64Gi", labels={CAPACITY_LABEL: "2"}),
           kobj.node_body(f"{prefix}-b", cpu="24", memory="96Gi", labels={CAPACITY_LABEL: "5"}),
           kobj.node_body(f"{prefix}-c", cpu="12", memory="24Gi")])
    placements = {}
    for build, binary in (("release", built_example_scheduler.binary), ("debuggable", built_debuggable_example.binary)):
        ns = f"{prefix}-{build}"
        kobj.ensure_namespace(kube, ns)
        sched = f"sb-{build}-{unique}"
        run = schedulers(_config(sched, control_plane.scheduler_kubeconfig), name=build, binary=binary)
        run.wait_healthy()
        try:
            placements[build] = _place_in_order(kube, ns, sched)
            if build == "debuggable":
                for name, _ in SEQUENCE:
                    doc = record.explain(_pod_dict(kube, ns, name), top=2)
                    totals = [n["total"] for n in doc["topNodes"]]
                    assert doc["recorded"] and len(set(totals)) == len(totals), f"{name}: nodes tie: {doc}"
        finally:
            kobj.force_delete_pods(kube, ns)
            run.stop()
        kobj.wait_until(lambda: not kobj.pods_by_name(kube, ns), 60, what=f"pods of {ns} gone")
        time.sleep(1)  # the next scheduler's informers see the deletions
    assert placements["debuggable"] == placements["release"], placements


def test_explain_names_the_extenders_verdicts_and_scores(control_plane, kube, namespace, nodes, schedulers,
                                                        built_debuggable_example, unique, tmp_path):
    """The reference extender (filter + prioritize, called by the scheduler outside the plugins) beside the
    in-tree plugins only: the node whose quota is 0 is removed by the extender, and the extender's scores
    are part of each top node's total; `explain` names it. A pod of the same scheduler that does not opt in
    to recording is placed by the same extender and carries no record (negative control)."""
    from scheduler_build.config import schedulerconfig
    from scheduler_build.explain import record
    from testkit import extender_process

    ext = extender_process.start_extender(tmp_path, control_plane.admin_kubeconfig, f"extender-{unique}")
    try:
        ours = f"sb-debug-ext-{unique}"
        names = _nodes(nodes, f"dbx-{unique}")
        entry = schedulerconfig.extender_entry(ext.url, node_cache_capable=True)
        run = schedulers(e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig, extenders=[entry]),
                         binary=built_debuggable_example.binary, extra_args=e2e.EXTENDER_RETRY_ARGS)
        run.wait_healthy()
        _pod(kube, namespace, "x1", ours, cpu="1")
        placed = kobj.wait_bound(kube, namespace, 1, TIMEOUT)
        doc = record.explain(_pod_dict(kube, namespace, "x1"), top=3)
        key = f"extender {ext.url}"
        assert doc["recorded"] and doc["chosenNode"] == placed["x1"], doc
        assert [(e["extender"], e["passed"], e["failed"]) for e in doc["extenders"]] == [(ext.url, 2, 1)], doc
        assert {(f["node"], f["plugin"]) for f in doc["filteredNodes"]} == {(names["full"], key)}, doc
        for node in doc["topNodes"]:  # both nodes the extender kept, its score in their totals
            (scored,) = [p for p in node["plugins"] if p["plugin"] == key]
            assert scored["raw"] is not None and scored["weighted"] == scored["raw"] * scored["weight"], node
            assert node["total"] == sum(p["weighted"] or 0 for p in node["plugins"]), node
        assert {n["node"] for n in doc["topNodes"]} == {names["room"], names["nolabel"]}, doc
        out = _explain(control_plane.admin_kubeconfig, namespace, "x1").stdout
        assert f"extender {ext.url}: filter kept 2, removed 1" in out, out
        _pod(kube, namespace, "x2", ours, cpu="1", opt_in=False)
        kobj.wait_bound(kube, namespace, 2, TIMEOUT)
        assert not record.explain(_pod_dict(kube, namespace, "x2"))["recorded"]
    finally:
        ext.stop()
