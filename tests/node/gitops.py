"""Issue 20 on the real node: the rendered output deployed without `inv deploy` (tests/node/test_node.py).

`kubectl apply -k` of `config.render --plain` plus the Secrets of `--tls-secrets` (what Argo CD or
Flux do), and `helm install` of `config.chart` (Helm makes the Secrets). Each runs the example
under a name and namespace of its own, beside the deployed example, and proves the scheduler
reached the extender over mutual TLS by a pod it binds (the extender's filter is not ignorable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

from scheduler_build.cluster import containerd
from tests.node.scenarios import ROOT, apis, inv, wait

SPEC = ROOT / "examples" / "underlay" / "scheduler.yaml"


def run(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(args[:3])} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def derived_spec(directory: Path, name: str) -> Path:
    """The example under another name and namespace (same images, so nothing new to build)."""
    doc = yaml.safe_load(SPEC.read_text())
    doc.update(name=name, namespace=f"{name}-system")
    for profile, suffix in zip(doc["profiles"], ("", "-spread")):
        profile["schedulerName"] = name + suffix
    for plugin in doc["plugins"]:
        plugin["path"] = str((SPEC.parent / plugin["path"]).resolve())
    doc["patches"] = [str((SPEC.parent / patch).resolve()) for patch in doc["patches"]]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def images_loaded(state_dir: Path) -> None:
    """The example's images on the node (built and loaded by the example's test; cached here)."""
    for args in (["image.build", "--spec", str(SPEC)], ["image.extender"],
                 ["cluster.load", "--spec", str(SPEC), "--state-dir", str(state_dir)]):
        done = inv(*args, timeout=3600)
        assert done.returncode == 0, done.stderr[-3000:]


def scheduled_through(kubeconfig: str, scheduler: str, namespace: str) -> None:
    """Both Deployments Available, then a pod naming the scheduler is bound by it and runs."""
    apps, core, _ = apis(kubeconfig)
    for name in (scheduler, f"{scheduler}-extender"):
        wait(lambda: (apps.read_namespaced_deployment(name, namespace).status.available_replicas or 0) >= 1,
             timeout=300, what=f"Deployment {namespace}/{name} Available")
    pod = f"via-{scheduler}"
    core.create_namespaced_pod("default", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": "default"},
        "spec": {"schedulerName": scheduler, "containers": [{
            "name": "c", "image": containerd.PAUSE_IMAGE, "imagePullPolicy": "Never"}]}})
    try:
        wait(lambda: core.read_namespaced_pod(pod, "default").status.phase == "Running", what=f"pod {pod} Running")
        # The Scheduled event trails the binding (a buffered broadcaster): wait for it, then check who sent it.
        def events():
            return core.list_namespaced_event("default", field_selector=f"involvedObject.name={pod}").items

        wait(lambda: any(e.reason == "Scheduled" for e in events()), what=f"the Scheduled event of {pod}")
        assert any(e.reason == "Scheduled" and scheduler in (e.reporting_component or e.source.component or "")
                   for e in events()), [(e.reason, e.reporting_component) for e in events()]
    finally:
        core.delete_namespaced_pod(pod, "default", grace_period_seconds=0)


def kubectl_apply_k(kubeconfig: str, state_dir: Path, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "this test applies with kubectl: bash ci/setup.sh builds it (as root)"
    images_loaded(state_dir)
    out, secrets = tmp_path / "deploy", tmp_path / "secrets"
    rendered = inv("config.render", "--spec", str(derived_spec(tmp_path, "gitops")), "--out", str(out), "--plain",
                   "--tls-secrets", str(secrets))
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    try:
        run([kubectl, "apply", "-k", str(out)], env)
        run([kubectl, "apply", "-f", str(secrets / "extender-tls-secrets.yaml")], env)
        scheduled_through(kubeconfig, "gitops", "gitops-system")
    finally:
        subprocess.run([kubectl, "delete", "-k", str(out), "--wait=false"], env=env, capture_output=True, timeout=300)


def helm_install(kubeconfig: str, state_dir: Path, tmp_path: Path) -> None:
    from scheduler_build import settings
    from scheduler_build.config import chart

    images_loaded(state_dir)
    made = inv("config.chart", "--spec", str(derived_spec(tmp_path, "helmed")), "--out", str(tmp_path / "chart"))
    assert made.returncode == 0, made.stderr[-3000:]
    helm = [str(chart.helm(settings.cache_dir())), "--kubeconfig", kubeconfig]
    try:
        run([*helm, "install", "helmed", str(tmp_path / "chart"), "--wait", "--timeout", "5m"])
        scheduled_through(kubeconfig, "helmed", "helmed-system")
    finally:
        subprocess.run([*helm, "uninstall", "helmed", "--wait=false"], capture_output=True, timeout=300)
