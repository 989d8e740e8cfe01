"""The spec a task reads, and how it fills a build request (inputs/common.py, inputs/build.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build.debuggable import Debuggable
from scheduler_build.errors import UserError
from scheduler_build.inputs import build, common
from scheduler_build.inputs.build import default_request

REPO = Path(__file__).resolve().parents[3]


def test_choose_spec():
    assert common.choose_spec("s.yaml", False, "d.yaml", plain_flags=True) == Path("s.yaml")
    assert common.choose_spec(None, False, "d.yaml", plain_flags=False) == Path("d.yaml")
    assert common.choose_spec(None, True, "d.yaml", plain_flags=False) is None
    assert common.choose_spec(None, False, "d.yaml", plain_flags=True) is None  # `inv build --k8s-version 1.35`
    assert common.choose_spec(None, False, "", plain_flags=False) is None


def test_missing_spec_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="build spec .*nope.yaml not found") as err:
        common.spec_at(tmp_path / "nope.yaml")
    assert "--no-spec" in err.value.hint


def test_example_spec_fills_the_request():
    loaded = spec_mod.load(REPO / "examples/underlay/scheduler.yaml")
    request = build.apply_spec(default_request(), loaded)
    assert [p.package for p in request.plugin_sources] == ["example.com/acme/underlay/pkg/underlayiplimit"]
    assert [p.name for p in request.patches] == ["0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"]
    with pytest.raises(UserError, match="builds kube-scheduler, not kube-apiserver"):
        build.apply_spec(default_request(component="kube-apiserver"), loaded)


def test_spec_arches(monkeypatch):
    loaded = spec_mod.load(REPO / "examples/underlay/scheduler.yaml")  # linux/amd64, linux/arm64
    monkeypatch.setattr(platforms, "host_arch", lambda: "amd64")
    assert build.spec_arches(loaded, all_platforms=False) == ["amd64"]
    assert build.spec_arches(loaded, all_platforms=True) == ["amd64", "arm64"]
    monkeypatch.setattr(platforms, "host_arch", lambda: "s390x")
    assert build.spec_arches(loaded, all_platforms=False) == ["amd64"]


def test_the_recorder_is_decided_once_and_the_spec_does_not_turn_it_back_on():
    """--no-debuggable (or a setting) decides; apply_spec only adds what the spec says is recorded (issue 38:
    apply_spec OR-ed the spec's debuggable.enabled in again, so --no-debuggable meant on)."""
    example = spec_mod.load(REPO / "examples/underlay/scheduler.yaml")
    loaded = dataclasses.replace(example, debuggable=dataclasses.replace(example.debuggable, enabled=True))
    assert loaded.debuggable.enabled
    off = dataclasses.replace(default_request(), debuggable=Debuggable(enabled=False))
    assert build.apply_spec(off, loaded).debuggable.enabled is False
    assert build.build_request({}, spec=loaded).debuggable.enabled is True  # the spec decides when no flag does
    assert build.build_request({}, spec=loaded, debuggable=common.OFF).debuggable.enabled is False
