"""kubeclient: the one Kubernetes API client from a kubeconfig (no API server needed)."""

from __future__ import annotations

import pytest

from scheduler_build import kubeclient
from scheduler_build.config import validate
from scheduler_build.errors import UserError


def test_missing_kubeconfig(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        kubeclient.from_kubeconfig(tmp_path / "nope", None)


def test_unknown_context(tmp_path):
    kc = tmp_path / "kc"
    kc.write_text(validate.DUMMY_KUBECONFIG)
    with pytest.raises(UserError, match="--context|context"):
        kubeclient.from_kubeconfig(kc, "no-such-context")


def test_invalid_kubeconfig(tmp_path):
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(UserError, match=str(kc)):
        kubeclient.from_kubeconfig(kc)


def test_pool_size(tmp_path):
    kc = tmp_path / "kc"
    kc.write_text(validate.DUMMY_KUBECONFIG)
    client = kubeclient.from_kubeconfig(kc, pool_size=32)
    assert client.rest_client.pool_manager.connection_pool_kw["maxsize"] == 32
