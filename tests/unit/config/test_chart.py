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


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(specs()))
def test_helm_lint_is_clean_and_template_equals_config_render(name, tmp_path):
    spec = specs()[name]
    chart_dir = write_chart(spec, tmp_path / spec.name)
    lint = helm("lint", "--strict", "--kube-version", K8S, str(chart_dir))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    objects = template(chart_dir)
    secrets = {k for k in objects if k[0] == "Secret"}
    assert len(secrets) == (3 if spec.reference_extender.enabled and spec.reference_extender.tls else 0)
    assert {k: v for k, v in objects.items() if k not in secrets} == rendered_objects(spec)
    assert schemas.check(list(objects.values()), K8S, settings.cache_dir()) == []


@pytest.mark.integration
def test_helm_package_of_the_chart_directory_leaves_our_record_out(tmp_path):
    """The record of what we wrote (owned.RECORD) sits in the chart directory; a user's own `helm package`
    of it must not ship it: the chart's .helmignore (ours, recorded like every file) lists it. Real Helm.
    Negative control: without the .helmignore line the packaged chart holds the record."""
    import tarfile

    from scheduler_build import owned

    spec = specs()["ha-tls"]
    chart_dir = write_chart(spec, tmp_path / spec.name)
    assert (chart_dir / owned.RECORD).is_file() and chart.HELMIGNORE in owned.read_record(chart_dir)
    proc = helm("package", str(chart_dir), "--destination", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with tarfile.open(next((tmp_path / "out").glob("*.tgz"))) as archive:
        packaged = {name.split("/", 1)[1] for name in archive.getnames()}
    assert owned.RECORD not in packaged
    assert packaged == set(chart.chart_files(spec, IMAGE))  # what helm package ships: the chart, .helmignore too


@pytest.mark.integration
def test_values_switch_the_extender_off_and_scale_and_place_the_pods(tmp_path):
    spec = specs()["ha-tls"]
    chart_dir = write_chart(spec, tmp_path / "chart")
    off = template(chart_dir, "extender.enabled=false", "replicas=1")
    single = dataclasses.replace(spec, deployment=dataclasses.replace(spec.deployment, replicas=1),
                                 reference_extender=dataclasses.replace(spec.reference_extender, enabled=False))
    assert off == rendered_objects(single)  # the configuration without the reference extender, no budget
    placed = template(chart_dir, "tolerations[0].key=dedicated", "tolerations[0].operator=Exists",
                      "image.digest=sha256:" + "b" * 64, "extender.replicas=1")
    pod = placed[("Deployment", spec.namespace, spec.name)]["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    assert pod["containers"][0]["image"] == IMAGE + "@sha256:" + "b" * 64
    assert ("PodDisruptionBudget", spec.namespace, f"{spec.name}-extender") not in placed
    # Negative controls: a changed value is seen by the equality, a broken chart by lint.
    scaled = {k: v for k, v in template(chart_dir, "replicas=3").items() if k[0] != "Secret"}
    assert scaled != rendered_objects(spec) and scaled[("Deployment", spec.namespace, spec.name)]["spec"]["replicas"] == 3
    (chart_dir / "Chart.yaml").write_text((chart_dir / "Chart.yaml").read_text().replace(
        f"version: {spec.version}", "version: not-semver"))
    lint = helm("lint", "--strict", "--kube-version", K8S, str(chart_dir))
    assert lint.returncode != 0 and "version" in (lint.stdout + lint.stderr).lower()
