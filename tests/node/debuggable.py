"""The debuggable build of the example on the real node, through `deploy` (docs/explain.md).

The example spec with `debuggable.enabled` (a copy, for linux/amd64 only: one compile) is packaged
by image.build (tag `-debug`), loaded into the node's containerd and deployed by `inv deploy`, over
the example's release Deployment of the same names when it ran before. Then, on the real kubelet,
an opted-in pod is bound and carries the record `explain` reads; a pod that did not opt in is
bound too and carries none (the negative control: `explain` says what to deploy). The example's
reference extender filters the pod outside the plugins: its verdict is in the record as well.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from scheduler_build import spec as spec_mod
from scheduler_build.build import debuggable as debuggable_mod
from tests.node import scenarios

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/underlay/scheduler.yaml"
NS = "node-explain"
NODE = "scheduler-build-node"


def debuggable_spec(directory: Path) -> Path:
    """The example with the recorder on, its relative paths made absolute so the copy builds the same."""
    spec = yaml.safe_load(EXAMPLE.read_text())
    for plugin in spec.get("plugins") or []:
        if "path" in plugin:
            plugin["path"] = str((EXAMPLE.parent / plugin["path"]).resolve())
    spec["patches"] = [str((EXAMPLE.parent / p).resolve()) for p in spec.get("patches") or []]
    spec["platforms"] = ["linux/amd64"]  # the node's: one compile, not a cross-compile too
    spec["debuggable"]["enabled"] = True
    path = directory / "debuggable.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _ok(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    out = scenarios.inv(*args, timeout=timeout)
    assert out.returncode == 0, f"inv {' '.join(args)} failed ({out.returncode}):\n{out.stderr[-3000:]}"
    return out


def _explain(kubeconfig: str, pod: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scheduler_build", "explain", pod, "-n", NS, "--kubeconfig", kubeconfig,
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=120)


def deployed_and_explained(kubeconfig: str, state_dir: Path, directory: Path) -> None:
    spec = debuggable_spec(directory)
    _ok("image.build", "--spec", str(spec))
    _ok("image.extender")
    loaded = _ok("cluster.load", "--spec", str(spec), "--state-dir", str(state_dir)).stdout.split()
    assert loaded[0].endswith(f"-{debuggable_mod.SUFFIX}"), loaded
    _ok("deploy", "--spec", str(spec), "--kubeconfig", kubeconfig, "--timeout", "300")
    apps, core, coord = scenarios.apis(kubeconfig)
    deployment = apps.read_namespaced_deployment(scenarios.SCHEDULER, scenarios.NS)
    assert deployment.spec.template.spec.containers[0].image == loaded[0]

    def debuggable_leads() -> bool:
        # deploy returns once the new pod is ready; a release pod of an earlier test may still be terminating
        # and scheduling, and the Lease moves only after it: pods created before then may be bound by it.
        pods = core.list_namespaced_pod(scenarios.NS, label_selector=scenarios.SCHEDULER_PODS).items
        return bool(pods) and all(p.spec.containers[0].image == loaded[0] for p in pods) and any(
            scenarios.holder(coord).startswith(p.metadata.name + "_") for p in pods)

    scenarios.wait(debuggable_leads, timeout=240, what="the debuggable scheduler alone, holding the Lease")
    assert deployment.metadata.labels.get(debuggable_mod.LABEL) == "true", deployment.metadata.labels
    opt_in = yaml.safe_load(spec.read_text())["debuggable"]["podLabel"]
    scenarios.ensure_namespace(core, NS)
    try:
        core.create_namespaced_pod(NS, scenarios.pause_pod("recorded", labels={opt_in: "true", **scenarios.NEEDS_IP}))
        core.create_namespaced_pod(NS, scenarios.pause_pod("unrecorded", labels=dict(scenarios.NEEDS_IP)))
        scenarios.wait(lambda: all(core.read_namespaced_pod(n, NS).status.phase == "Running"
                                   for n in ("recorded", "unrecorded")), timeout=240, what="both pods Running")
        out = _explain(kubeconfig, "recorded", "--json")
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert doc["recorded"] and doc["outcome"] == "bound", doc
        assert doc["chosenNode"] == core.read_namespaced_pod("recorded", NS).spec.node_name == NODE, doc
        assert doc["scheduler"].endswith(f".{debuggable_mod.SUFFIX}"), doc  # the debuggable binary wrote it
        # The reference extender (filter and prioritize) is called outside the plugins: its filter verdict is
        # in the record too (one feasible node, so neither plugins nor extenders score).
        url = spec_mod.reference_extender_url(spec_mod.load(spec))
        assert [(e["extender"], e["passed"], e["failed"]) for e in doc["extenders"]] == [(url, 1, 0)], doc
        text = _explain(kubeconfig, "recorded").stdout
        assert f"bound to {NODE}" in text and f"extender {url}: filter kept 1, removed 0" in text, text
        print(text)  # shown by pytest -rA
        out = _explain(kubeconfig, "unrecorded")  # negative control: bound, but it did not opt in
        assert out.returncode == 0 and len(out.stdout.strip().splitlines()) == 1 and "--debuggable" in out.stdout, out
    finally:
        core.delete_namespace(NS)
