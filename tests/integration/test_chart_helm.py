"""config.chart with the real Helm (moved out of the unit tier, beside tests/unit/config/test_chart.py, whose
helpers it shares): `helm lint --strict` is clean, `helm template` equals config.render, values switch and
place the pods, and `helm package` of the chart directory leaves our ownership record out."""

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
from tests.unit.config.test_chart import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    IMAGE, K8S, helm, rendered_objects, specs, template, write_chart,
)


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
