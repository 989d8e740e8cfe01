"""Integration tests beside tests/unit/config/test_render_judges.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: The rendered manifests before the linters platforms run: kubeconform -strict against the target
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
from tests.unit.config.test_render_judges import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    K8S, objects, variants, written,
)


def test_kubeconform_strict_accepts_every_variant_and_catches_a_planted_fault():
    cache = settings.cache_dir()
    for key, spec in variants().items():
        objs = objects(manifests.render_files(spec, "registry.example.com/acme/s:v1"))
        assert schemas.check(objs, K8S, cache) == [], key
    # Negative control: an unknown field, a wrong type and an API the release does not serve.
    objs = objects(manifests.render_files(variants()["ha-tls"], "r/x:1"))
    dep = next(o for o in objs if o["kind"] == "Deployment")
    dep["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    budget = next(o for o in objs if o["kind"] == "PodDisruptionBudget")
    budget["spec"]["maxUnavailable"] = [1]
    objs.append({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "old"}})
    problems = "\n".join(schemas.check(objs, K8S, cache))
    assert "imagePullPolcy" in problems and "maxUnavailable" in problems
    assert "PodDisruptionBudget old" in problems


def test_kube_score_finds_nothing_critical_but_the_documented_exceptions(tmp_path):
    cache = settings.cache_dir()
    for key, spec in variants().items():
        findings = linters.kube_score(written(tmp_path / key, manifests.render_files(spec, "r/x:1")), cache)
        assert [str(f) for f in linters.unexcused(findings)] == [], key
    # Negative control: without the NetworkPolicy and the budgets, kube-score says so.
    files = manifests.render_files(variants()["ha-tls"], "r/x:1")
    paths = [p for p in written(tmp_path / "planted", files) if p.name not in ("networkpolicy.yaml", "pdb.yaml")]
    checks = {f.check for f in linters.unexcused(linters.kube_score(paths, cache))}
    assert {"pod-networkpolicy", "deployment-has-poddisruptionbudget"} <= checks
