"""Each task family's inputs, decided in inputs/ from plain settings (a dict stands for invoke's merged config)
and the environment, before any work: the one kubeconfig rule, doctor, clean, scaffold, builder, extender."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_build.errors import UserError
from scheduler_build.extender.config import default_kubeconfig
from scheduler_build.inputs import clean, common, doctor, explain, extender, scaffold
from scheduler_build.inputs.builder import builder_inputs

KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"


def test_the_one_kubeconfig_rule_flag_then_setting_then_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path}/env:{tmp_path}/second")
    assert common.kubeconfig_path({}, None) == f"{tmp_path}/env"  # the list's first file
    assert common.kubeconfig_path({"deploy": {"kubeconfig": "/s"}}, None) == "/s"
    assert common.kubeconfig_path({"deploy": {"kubeconfig": "/s"}}, "/f") == "/f"
    monkeypatch.delenv("KUBECONFIG")
    assert common.kubeconfig_path({}, None) == ""
    with pytest.raises(UserError, match="no kubeconfig given"):
        explain.explain_inputs({}, pod="p")


def test_doctor_and_explain_take_the_same_rule(tmp_path, monkeypatch):
    config = tmp_path / "k"
    config.write_text(KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    decided = doctor.doctor_inputs({"builder": {"image": "golang:x"}, "paths": {"cache_dir": str(tmp_path / "c")}})
    assert (decided.kubeconfig, decided.builder_image, decided.cache_dir) == (str(config), "golang:x", tmp_path / "c")
    assert decided.home == str(tmp_path) and decided.registry == "" and not decided.node
    assert explain.explain_inputs({}, pod="p", top="5").kubeconfig == str(config)
    with pytest.raises(UserError, match="--top 'x' is not a number"):
        explain.explain_inputs({}, pod="p", top="x")


def test_clean_removes_dist_when_nothing_is_chosen():
    assert clean.clean_inputs({}).dist and not clean.clean_inputs({}).cache
    everything = clean.clean_inputs({}, all=True)
    assert (everything.dist, everything.cache, everything.volume, everything.images) == (True, True, True, True)
    assert not clean.clean_inputs({}, cache=True).dist  # negative control: a choice replaces the default
    assert clean.clean_inputs({"build": {"gocache_volume": "v"}}).gocache_volume == "v"


def test_scaffold_version_falls_back_to_k8s_version_and_out_is_required():
    given = dict(name="N", points="filter", module="m", k8s_version=None)
    assert scaffold.scaffold_inputs({"k8s": {"version": "1.35"}}, out="o", **given).k8s_version == "1.35"
    assert scaffold.scaffold_inputs({"k8s": {"version": "1.35"}, "scaffold": {"k8s_version": "1.34"}},
                                    out="o", **given).k8s_version == "1.34"
    with pytest.raises(UserError, match="--out is required"):
        scaffold.scaffold_inputs({}, out="", **given)


def test_builder_inputs_negated_pull():
    assert builder_inputs({}).pull is True
    assert builder_inputs({}, pull=common.OFF).pull is False
    assert builder_inputs({"builder": {"go": "1.27.3"}}).go == "1.27.3"


def test_extender_kubeconfig_default_is_decided_where_the_config_is(tmp_path, monkeypatch):
    assert default_kubeconfig({}, str(tmp_path)) == ""  # no file: in-cluster
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube/config").write_text(KUBECONFIG)
    assert default_kubeconfig({}, str(tmp_path)) == f"{tmp_path}/.kube/config"
    assert default_kubeconfig({"KUBECONFIG": f"{tmp_path}/k:x"}, str(tmp_path)) == ""  # named, absent
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert extender.serve_inputs({}).kubeconfig == f"{tmp_path}/.kube/config"
    assert extender.serve_inputs({}, kubeconfig="/given").kubeconfig == "/given"
    assert Path(extender.serve_inputs({}, port="0").kubeconfig).name == "config"
