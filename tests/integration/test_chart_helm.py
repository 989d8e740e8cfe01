"""Integration tests beside tests/unit/config/test_chart.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: config.chart: the Helm chart from the spec. `helm lint --strict` is clean, and `helm template` with
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
