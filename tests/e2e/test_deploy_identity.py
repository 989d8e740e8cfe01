"""The scheduler runs with exactly the RBAC `inv deploy` applies: its ServiceAccount's own token.

The rendered ConfigMap's configuration is used as is, except clientConnection.kubeconfig,
which points at a kubeconfig holding a TokenRequest token of the rendered ServiceAccount
(in a Pod the same token is mounted). Taking one ClusterRoleBinding away stops scheduling;
`inv deploy` puts it back and the pod is bound: a missing permission fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler_build.cluster import pki as cluster_pki
from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parent.parent.parent
TIMEOUT = 240


def _deploy(kubeconfig, spec_file):
    done = subprocess.run([sys.executable, "-m", "invoke", "deploy", "--kubeconfig", kubeconfig, "--spec",
                           str(spec_file), "--image", "r/sched:1", "--no-wait"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_scheduler_runs_with_the_deployed_service_account(control_plane, kube, nodes, schedulers, tmp_path, unique):
    from kubernetes import client as k
    from kubernetes.client.exceptions import ApiException

    name, ns = f"ident-{unique}", f"ident-ns-{unique}"
    spec_file = tmp_path / "scheduler.yaml"
    spec_file.write_text(yaml.safe_dump({"name": name, "version": "1.0.0",
                                         "kubernetes": {"version": control_plane.version or "1.36"}, "namespace": ns}))
    _deploy(control_plane.admin_kubeconfig, spec_file)
    core = k.CoreV1Api(kube)
    rbac = k.RbacAuthorizationV1Api(kube)
    try:
        token = core.create_namespaced_service_account_token(
            name, ns, {"spec": {"expirationSeconds": 3600}}).status.token
        kc = cluster_pki.write_kubeconfig(tmp_path / "sa.kubeconfig", cluster_pki.kubeconfig(
            control_plane.server, Path(control_plane.ca_file).read_bytes(), f"system:serviceaccount:{ns}:{name}",
            token=token))
        config = yaml.safe_load(core.read_namespaced_config_map(f"{name}-config", ns).data["config.yaml"])
        config["clientConnection"] = dict(config.get("clientConnection") or {}, kubeconfig=str(kc))
        run = schedulers(config, name=name)
        nodes([kobj.node_body(f"ident-{unique}-{i}") for i in range(2)])
        kobj.create_pods(kube, ns, [kobj.pod_body(f"p{i}", name) for i in range(3)])
        kobj.wait_bound(kube, ns, 3, TIMEOUT)

        # Without the binding to system:kube-scheduler the ServiceAccount may not bind pods.
        rbac.delete_cluster_role_binding(f"{name}-kube-scheduler")
        kobj.create_pods(kube, ns, [kobj.pod_body("after-revoke", name)])
        kobj.wait_until(lambda: "forbidden" in run.log_text().lower(), TIMEOUT, what="a forbidden error in the log")
        assert kobj.pods_by_name(kube, ns)["after-revoke"].spec.node_name is None
        _deploy(control_plane.admin_kubeconfig, spec_file)  # the rendered RBAC again
        kobj.wait_bound(kube, ns, 4, TIMEOUT)
    finally:
        kobj.force_delete_pods(kube, ns)
        for crb in (f"{name}-kube-scheduler", f"{name}-volume-scheduler"):
            try:
                rbac.delete_cluster_role_binding(crb)
            except ApiException:
                pass
