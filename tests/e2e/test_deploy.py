"""`inv deploy` against a real kube-apiserver: server dry run, server-side apply, the rendered RBAC.

No kubelet or controller-manager runs here, so the Deployment can never become available: the
wait path is checked for a clear, non-traceback report of why (the deployment's pods running
for real is the e2e image tests' business).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parent.parent.parent


def _inv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def _allowed(kube, user: str, verb: str, resource: str, namespace: str = "", name: str = "", group: str = "",
             subresource: str = "") -> bool:
    from kubernetes import client

    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=user, groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace or 'default'}"],
        resource_attributes=client.V1ResourceAttributes(verb=verb, resource=resource, namespace=namespace or None,
                                                        name=name or None, group=group, subresource=subresource or None)))
    return client.AuthorizationV1Api(kube).create_subject_access_review(review).status.allowed


def test_deploy_dry_run_apply_and_rbac(control_plane, kube, tmp_path, unique):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    name, ns = f"dep-{unique}", f"dep-ns-{unique}"
    spec_file = tmp_path / "scheduler.yaml"
    spec_file.write_text(yaml.safe_dump({
        "name": name, "version": "1.0.0", "kubernetes": {"version": control_plane.version or "1.36"},
        "namespace": ns, "referenceExtender": {"enabled": True, "image": "r/ext:1", "bind": True}}))
    common = ["--kubeconfig", control_plane.admin_kubeconfig, "--spec", str(spec_file), "--image", "r/sched:1", "--json"]
    core = client.CoreV1Api(kube)
    try:
        # 1. server dry run: admitted and validated by the server, nothing stored
        dry = _inv("deploy", *common, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        report = json.loads(dry.stdout)
        results = {(a["kind"], a["name"]): a["result"] for a in report["applied"]}
        assert results[("Namespace", ns)] == "dry-run ok"
        assert results[("ClusterRoleBinding", f"{name}-kube-scheduler")] == "dry-run ok"
        assert results[("RoleBinding", f"{name}-extension-apiserver-authentication-reader")] == "dry-run ok"
        # in the namespace the apply creates: judged offline against the server release's own OpenAPI
        assert results[("Deployment", name)].startswith("schema ok (offline: namespace")
        with pytest.raises(ApiException) as info:
            core.read_namespace(ns)
        assert info.value.status == 404

        # 2. apply for real (twice: server-side apply is idempotent)
        for _ in range(2):
            applied = _inv("deploy", *common, "--no-wait")
            assert applied.returncode == 0, applied.stderr
        dep = client.AppsV1Api(kube).read_namespaced_deployment(name, ns)
        assert dep.metadata.generation == 1
        managers = {(m.manager, m.operation) for m in dep.metadata.managed_fields}
        assert ("scheduler-build", "Apply") in managers
        cm = core.read_namespaced_config_map(f"{name}-config", ns)
        assert yaml.safe_load(cm.data["config.yaml"])["profiles"][0]["schedulerName"] == name
        assert core.read_namespaced_service(f"{name}-extender", ns).spec.ports[0].port == 8888

        # 2b. mutual TLS with the extender: the certificates are Secrets, made once and then kept
        # (the second apply rolled nothing); a rotation needs to wait, and here it cannot finish
        apps = client.AppsV1Api(kube)
        secrets = {k: core.read_namespaced_secret(f"{name}-extender-tls-{k}", ns) for k in ("ca", "serving", "client")}
        assert secrets["serving"].type == secrets["client"].type == "kubernetes.io/tls"
        ext_dep = apps.read_namespaced_deployment(f"{name}-extender", ns)
        digest = "scheduler-build.io/extender-tls-sha256"
        assert ext_dep.metadata.generation == 1
        assert ext_dep.spec.template.metadata.annotations[digest] == dep.spec.template.metadata.annotations[digest]
        refused = _inv("deploy", *common, "--rotate-certs", "--no-wait")
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        assert "--no-wait" in refused.stderr.strip().splitlines()[-1]
        stopped = _inv("deploy", *common, "--rotate-certs", "--timeout", "4")
        assert stopped.returncode != 0 and "Traceback" not in stopped.stderr
        assert "certificate rotation stopped" in stopped.stderr
        bundle = core.read_namespaced_secret(f"{name}-extender-tls-ca", ns).data["ca.crt"]
        assert base64.b64decode(bundle).count(b"BEGIN CERTIFICATE") == 2  # step 1: old and new CA trusted
        assert core.read_namespaced_secret(f"{name}-extender-tls-client", ns).data == secrets["client"].data

        # 3. the rendered RBAC gives the scheduler's ServiceAccount what it needs, and its Lease only
        sa = f"system:serviceaccount:{ns}:{name}"
        coord = "coordination.k8s.io"
        assert _allowed(kube, sa, "get", "leases", ns, name, coord)
        assert _allowed(kube, sa, "update", "leases", ns, name, coord)
        assert _allowed(kube, sa, "create", "leases", ns, "", coord)
        assert not _allowed(kube, sa, "update", "leases", ns, "someone-elses-lock", coord)
        assert _allowed(kube, sa, "list", "nodes")
        assert _allowed(kube, sa, "create", "pods", "default", "p", "", "binding")
        assert _allowed(kube, sa, "get", "configmaps", "kube-system", "extension-apiserver-authentication")
        assert _allowed(kube, sa, "list", "persistentvolumeclaims")  # system:volume-scheduler
        ext = f"system:serviceaccount:{ns}:{name}-extender"
        assert _allowed(kube, ext, "watch", "pods") and _allowed(kube, ext, "create", "pods", "default", "p", "", "binding")
        assert not _allowed(kube, ext, "delete", "pods", "default")

        # 4. waiting: never available here; the report says why, without a traceback
        waited = _inv("deploy", *common, "--timeout", "4")
        assert waited.returncode != 0
        assert "not available after 4" in waited.stderr and "why:" in waited.stderr
        assert "Traceback" not in waited.stderr
    finally:
        rbac = client.RbacAuthorizationV1Api(kube)
        for crb in (f"{name}-kube-scheduler", f"{name}-volume-scheduler", f"{name}-extender"):
            try:
                rbac.delete_cluster_role_binding(crb)
            except ApiException:
                pass
        try:
            rbac.delete_cluster_role(f"{name}-extender")
        except ApiException:
            pass


def test_deploy_reports_an_invalid_object_with_the_servers_message(control_plane, tmp_path, unique):
    out = tmp_path / "out"
    spec_file = tmp_path / "scheduler.yaml"
    spec_file.write_text(yaml.safe_dump({"name": f"bad-{unique}", "version": "1", "kubernetes": {"version": "1.36"},
                                         "namespace": "default"}))
    rendered = _inv("config.render", "--spec", str(spec_file), "--out", str(out), "--image", "r/x:1")
    assert rendered.returncode == 0, rendered.stderr
    # Corrupt the rendered Deployment the way a hand edit would: the server must refuse it.
    dep_file = Path(rendered.stdout.strip()) / "deployment.yaml"
    doc = yaml.safe_load(dep_file.read_text())
    doc["spec"]["replicas"] = -1
    dep_file.write_text(yaml.safe_dump(doc))
    result = _inv("deploy", "--kubeconfig", control_plane.admin_kubeconfig, "--dir", str(out), "--dry-run")
    assert result.returncode != 0
    assert f"applying Deployment default/bad-{unique} failed" in result.stderr and "replicas" in result.stderr
    assert "Traceback" not in result.stderr


def test_deploy_dry_run_checks_objects_of_a_new_namespace_offline(control_plane, tmp_path, unique):
    """Negative control of the offline half of --dry-run: a field the schema does not know, in a
    namespace the server cannot check yet, fails the dry run with the field named."""
    out = tmp_path / "out"
    spec_file = tmp_path / "scheduler.yaml"
    spec_file.write_text(yaml.safe_dump({"name": f"off-{unique}", "version": "1", "kubernetes": {"version": "1.36"},
                                         "namespace": f"off-ns-{unique}"}))
    rendered = _inv("config.render", "--spec", str(spec_file), "--out", str(out), "--image", "r/x:1", "--plain")
    assert rendered.returncode == 0, rendered.stderr
    doc = yaml.safe_load((out / "deployment.yaml").read_text())
    doc["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    (out / "deployment.yaml").write_text(yaml.safe_dump(doc))
    result = _inv("deploy", "--kubeconfig", control_plane.admin_kubeconfig, "--dir", str(out), "--dry-run")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "offline schema check" in result.stderr and "imagePullPolcy" in result.stderr
