"""The rendered manifests before the linters platforms run: kubeconform -strict against the target
release's own OpenAPI (schemas generated offline) and kube-score with zero CRITICAL findings but the
shipped, documented exceptions. Each judge has a negative control: a planted fault it catches.

Integration: both judges are real third-party tools built from the Go module proxy (once, cached);
the schemas come from the k8s.io/kubernetes module the build downloads.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.config import linters, schemas
from scheduler_build.config import render as manifests
from scheduler_build.spec.model import Deployment, ReferenceExtender

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "tests" / "data" / "config" / "specs"
K8S = "v1.36.3"  # the release the test specs pin


def variants() -> dict[str, spec_mod.Spec]:
    """Every shape the manifests take: default, HA, extender TLS on and off, profiles only."""
    full = spec_mod.load(SPECS / "intree-full.yaml")
    return {
        "default": spec_mod.load(SPECS / "minimal.yaml"),
        "ha-tls": full,
        "tls-off": dataclasses.replace(full, reference_extender=dataclasses.replace(full.reference_extender, tls=False)),
        "single-replica-tls": dataclasses.replace(
            full, deployment=dataclasses.replace(full.deployment, replicas=1),
            reference_extender=dataclasses.replace(full.reference_extender, replicas=1)),
        "profiles-only": dataclasses.replace(full, reference_extender=ReferenceExtender(), extenders=[],
                                             deployment=Deployment()),
        "example": spec_mod.load(REPO / "examples" / "underlay" / "scheduler.yaml", check_files=False),
    }


def objects(files: dict[str, str]) -> list[dict]:
    names = yaml.safe_load(files["kustomization.yaml"])["resources"]
    return [d for name in names for d in yaml.safe_load_all(files[name]) if d]


def written(tmp: Path, files: dict[str, str]) -> list[Path]:
    """The kustomization's resources as files (what kube-score reads)."""
    tmp.mkdir(parents=True, exist_ok=True)
    out = []
    for name in yaml.safe_load(files["kustomization.yaml"])["resources"]:
        (tmp / name).write_text(files[name])
        out.append(tmp / name)
    return out


# --- unit: the conversion and the rendering rules ---------------------------


def test_convert_makes_strict_standalone_schemas_named_like_kubeconform():
    swagger = {"definitions": {
        "io.k8s.api.apps.v1.Thing": {"type": "object", "properties": {"spec": {"$ref": "#/definitions/x.Spec"}},
                                     "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Thing"}]},
        "x.Spec": {"type": "object", "properties": {"port": {"format": "int-or-string", "type": "string"},
                                                    "size": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}},
        "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
        "unused.Other": {"type": "object"}}}
    out = schemas.convert(swagger)
    assert list(out) == ["thing-apps-v1.json"]
    doc = out["thing-apps-v1.json"]
    assert doc["additionalProperties"] is False and doc["definitions"]["x.Spec"]["additionalProperties"] is False
    assert sorted(doc["definitions"]) == ["io.k8s.apimachinery.pkg.api.resource.Quantity", "x.Spec"]
    assert doc["definitions"]["x.Spec"]["properties"]["port"] == {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    assert schemas.file_name("v1", "ConfigMap") == "configmap-v1.json"
    assert schemas.file_name("rbac.authorization.k8s.io/v1", "ClusterRole") == "clusterrole-rbac-v1.json"


def test_ha_renders_budgets_anti_affinity_and_network_policies():
    files = manifests.render_files(variants()["ha-tls"], "r/x:1")
    objs = objects(files)
    budgets = {o["metadata"]["name"] for o in objs if o["kind"] == "PodDisruptionBudget"}
    assert budgets == {"acme-scheduler", "acme-scheduler-extender"}
    for dep in (o for o in objs if o["kind"] == "Deployment"):
        assert dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        assert dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    policies = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "NetworkPolicy"}
    assert set(policies) == {"acme-scheduler", "acme-scheduler-extender"}
    scheduler_egress = [p["port"] for rule in policies["acme-scheduler"]["egress"] for p in rule["ports"]]
    assert {443, 6443, 53, 9000, 8443} <= set(scheduler_egress)  # API server, DNS, extender, the spec's own extender
    single = objects(manifests.render_files(variants()["single-replica-tls"], "r/x:1"))
    assert not [o for o in single if o["kind"] == "PodDisruptionBudget"]
    assert all("affinity" not in o["spec"]["template"]["spec"] for o in single if o["kind"] == "Deployment")


def test_every_exception_is_documented_with_its_reason():
    doc = (REPO / "docs" / "gitops-helm.md").read_text()
    flat = " ".join(doc.split())
    for exc in linters.EXCEPTIONS:
        assert exc.check in doc and exc.summary in doc and " ".join(exc.reason.split()) in flat, exc


# --- integration: the real judges ------------------------------------------
