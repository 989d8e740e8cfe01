"""Where image.push pushes and what cosign runs with, decided in inputs/publish.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError
from scheduler_build.inputs import publish
from scheduler_build.spec.model import default_repository

REPO = Path(__file__).resolve().parents[3]
SETTING = {"registry": {"url": "127.0.0.1:5000/from/setting"}}


def _spec(repository: str | None):
    """The example spec with image.repository set (None: the default a spec without one gets)."""
    loaded = spec_mod.load(REPO / "examples/underlay/scheduler.yaml")
    chosen = default_repository(loaded.name) if repository is None else repository
    return dataclasses.replace(loaded, image=dataclasses.replace(loaded.image, repository=chosen))


def test_push_destination_flag_then_spec_then_setting():
    """The stated precedence (flag > spec > settings): the spec's image.repository beats registry.url. Issue 38:
    commands/image.py took registry.url first, so a project setting silently redirected every spec's push."""
    named = _spec("registry.example.com/acme/underlay-scheduler")
    assert publish.push_target(SETTING, None, named).name == "registry.example.com/acme/underlay-scheduler"
    assert publish.push_target(SETTING, "127.0.0.1:5001/f/x", named).name == "127.0.0.1:5001/f/x"
    # The spec's default is a local name (scheduler-build/<name>): it leaves the destination open.
    local = _spec(None)
    assert publish.push_target(SETTING, None, local).name == "127.0.0.1:5000/from/setting"
    assert publish.push_target(SETTING, None, None).name == "127.0.0.1:5000/from/setting"
    with pytest.raises(UserError, match="no registry given"):
        publish.push_target({}, None, local)


def test_the_cosign_password_has_one_home(monkeypatch, tmp_path):
    monkeypatch.delenv("COSIGN_PASSWORD", raising=False)
    assert publish.cosign_inputs({"sign": {"password": "p"}}).password == "p"
    monkeypatch.setenv("COSIGN_PASSWORD", "")  # set, even empty, wins over the setting
    decided = publish.cosign_inputs({"sign": {"password": "p"}})
    assert decided.password == "" and decided.environment["COSIGN_PASSWORD"] == ""
    with pytest.raises(UserError, match="the environment variable is not set"):
        publish.signing({}, True, "env://NO_SUCH_KEY_VARIABLE")
    monkeypatch.setenv("SOME_KEY_PEM", "pem")
    assert publish.signing({}, True, "env://SOME_KEY_PEM").key_ref == "env://SOME_KEY_PEM"
    assert publish.signing({}, False, None) is None


def test_source_date_epoch_is_read_once_and_checked(monkeypatch):
    from scheduler_build.inputs import common

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert common.source_date_epoch({}) == "1700000000"
    assert common.source_date_epoch({}, "5") == "5"
    assert common.source_date_epoch({"build": {"source_date_epoch": "7"}}) == "7"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(UserError, match="SOURCE_DATE_EPOCH must be an integer"):
        common.source_date_epoch({})
