"""config.chart: the Helm chart from the spec. `helm lint --strict` is clean, and `helm template` with
the default values gives exactly config.render's objects (plus the extender's TLS Secrets Helm makes);
values switch the extender off, scale the Deployments (budgets and anti-affinity follow) and place the
pods. Negative controls: a planted fault in the chart fails lint, a changed value fails the equality.

Integration: Helm v3 built from the Go module proxy (once, cached).
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
import yaml

from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.config import chart, output, schemas
from scheduler_build.config import render as manifests
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "tests" / "data" / "config" / "specs"
IMAGE = "registry.example.com/acme/kube-scheduler:v1.36.3-acme.7"
K8S = "v1.36.3"


def specs() -> dict[str, spec_mod.Spec]:
    return {"ha-tls": spec_mod.load(SPECS / "intree-full.yaml"),
            "example": spec_mod.load(REPO / "examples" / "underlay" / "scheduler.yaml", check_files=False),
            "no-extender": spec_mod.load(SPECS / "minimal.yaml")}


def key(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def rendered_objects(spec: spec_mod.Spec, image: str = IMAGE) -> dict[tuple, dict]:
    files = manifests.render_files(spec, image)
    return {key(d): d for name in yaml.safe_load(files["kustomization.yaml"])["resources"]
            for d in yaml.safe_load_all(files[name]) if d}


def write_chart(spec: spec_mod.Spec, out: Path) -> Path:
    output.write(chart.chart_files(spec, IMAGE), out, chart.CHART_NAMES, plain=True)
    return out


def helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(chart.helm(settings.cache_dir())), *args], capture_output=True, text=True, timeout=600)


def template(chart_dir: Path, *values: str) -> dict[tuple, dict]:
    sets = [arg for value in values for arg in ("--set", value)]
    proc = helm("template", "release", str(chart_dir), "--kube-version", K8S, *sets)
    assert proc.returncode == 0, proc.stderr
    return {key(d): d for d in yaml.safe_load_all(proc.stdout) if d}


def test_chart_metadata_and_values_follow_the_spec():
    spec = specs()["ha-tls"]
    files = chart.chart_files(spec, IMAGE + "@sha256:" + "a" * 64)
    meta = yaml.safe_load(files["Chart.yaml"])
    assert meta["version"] == spec.version and meta["appVersion"] == "v1.36.3-acme.7" and meta["name"] == spec.name
    values = yaml.safe_load(files["values.yaml"])
    assert values["image"] == {"repository": "registry.example.com/acme/kube-scheduler", "tag": "v1.36.3-acme.7",
                               "digest": "sha256:" + "a" * 64, "pullPolicy": "Always"}
    assert values["replicas"] == 2 and values["resources"] == spec.deployment.resources
    assert values["nodeSelector"] == spec.deployment.node_selector and values["tolerations"] == []
    assert values["priorityClassName"] == "system-cluster-critical"
    assert values["extender"]["enabled"] is True and values["extender"]["replicas"] == 2
    assert "extender" not in yaml.safe_load(chart.chart_files(specs()["no-extender"], IMAGE)["values.yaml"])
    with pytest.raises(UserError, match="not SemVer"):
        chart.chart_files(dataclasses.replace(spec, version="2"), IMAGE)
