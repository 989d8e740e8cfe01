"""Go is found where ci/setup.sh puts it without PATH; with no Go at all, doctor fails with the exact fix
and config.render still works. Real `inv` subprocesses with PATH stripped to /usr/bin:/bin.

"No Go at all" cannot be arranged on this machine without removing /usr/local/go (shared): those runs
start invoke's own Program in a child whose gotool.FALLBACKS is emptied, which is exactly what a host
without /usr/local/go/bin/go looks like to the code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
GO = "/usr/local/go/bin/go"
NO_GO = "import scheduler_build.golang.gotool as g; g.FALLBACKS = (); from invoke.main import program; program.run()"


def inv(args: list[str], go_anywhere: bool = True, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    env.pop("GOROOT", None)
    head = [sys.executable, "-m", "invoke"] if go_anywhere else [sys.executable, "-c", NO_GO]
    argv = [*head, "-r", str(REPO), *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_find_prefers_path_then_goroot_then_fallbacks(tmp_path, monkeypatch):
    bin_dir = tmp_path / "root" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "go").symlink_to(GO)  # the real toolchain, reached through another location
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("GOROOT", raising=False)
    assert shutil.which("go") is None
    assert gotool.find() == GO  # not on PATH: where ci/setup.sh puts it
    monkeypatch.setenv("GOROOT", str(tmp_path / "root"))
    assert gotool.find() == str(bin_dir / "go")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.delenv("GOROOT")
    monkeypatch.setattr(gotool, "FALLBACKS", ())
    assert gotool.find() == str(bin_dir / "go")  # PATH first
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert gotool.find() == ""
    with pytest.raises(UserError) as err:
        gotool.binary()
    assert "no Go toolchain" in str(err.value) and "go.dev/dl" in str(err.value)


def test_go_calls_run_without_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert gotool.env_value("GOROOT") == "/usr/local/go"
    # `go env GOPROXY`: the suite's pinned listings (file://, testkit/versions.py) first, the real proxy behind
    assert any(entry.startswith("http") for entry in gotool.proxy_setting().split(","))


def test_extra_environment_is_for_one_run_only(monkeypatch):
    """CoreDNS is built with GOBIN and CGO_ENABLED for that run: the process environment stays as it was."""
    monkeypatch.setenv("GOBIN", "/from/the/caller")
    before = dict(os.environ)
    out = gotool.check(["env", "GOBIN", "CGO_ENABLED"], env={"GOBIN": "/tmp/one-run", "CGO_ENABLED": "0"})
    assert out.split() == ["/tmp/one-run", "0"]
    assert dict(os.environ) == before
    assert gotool.check(["env", "GOBIN"]).strip() == "/from/the/caller"


def test_proxy_setting_without_go(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr(gotool, "FALLBACKS", ())
    monkeypatch.delenv("GOPROXY", raising=False)
    assert gotool.proxy_setting() == gotool.DEFAULT_PROXY
    monkeypatch.setenv("GOPROXY", "https://mirror.example/go")
    assert gotool.proxy_setting() == "https://mirror.example/go"


def test_the_users_goflags_are_kept_and_another_mod_refused(monkeypatch):
    """The real go reads them back (`go env GOFLAGS` in the environment every host go step gets)."""
    from scheduler_build.errors import UserError
    from scheduler_build.golang import gotool as tool

    monkeypatch.setenv("GOFLAGS", "-tags=acme -p=1")
    assert tool.run(["env", "GOFLAGS"]).stdout.strip() == "-tags=acme -p=1 -mod=mod"
    monkeypatch.setenv("GOFLAGS", "-mod=mod -p=2")
    assert tool.environment()["GOFLAGS"] == "-mod=mod -p=2"  # already there: not twice
    monkeypatch.setenv("GOFLAGS", "-mod=vendor")
    with pytest.raises(UserError, match=r"GOFLAGS='-mod=vendor' sets -mod=vendor"):
        tool.environment()
    monkeypatch.delenv("GOFLAGS")
    assert tool.environment()["GOFLAGS"] == "-mod=mod"


def test_doctor_warns_when_module_verification_is_switched_off(monkeypatch):
    """Read through the real go: GOSUMDB=off and GONOSUMDB each make the check fail (not required); the
    negative control: with neither set it passes."""
    from scheduler_build.doctor import checks

    for name in ("GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOSUMCHECK", "GOFLAGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOENV", "off")  # no go env file of the machine's in the way
    assert checks.check_module_verification().ok
    monkeypatch.setenv("GOSUMDB", "off")
    found = checks.check_module_verification()
    assert not found.ok and not found.required and "GOSUMDB=off" in found.detail
    monkeypatch.delenv("GOSUMDB")
    monkeypatch.setenv("GONOSUMDB", "example.com/*")
    assert "GONOSUMDB=example.com/*" in checks.check_module_verification().detail


# What `go mod tidy` printed for k8s.io/kubernetes v1.38.0-beta.0 here (2026-11-28): the proxy lists the
# release but refuses two of its dependencies.
REFUSED_TIDY = """go: finding module for package k8s.io/kubernetes/cmd/kube-scheduler/app
go: k8s.io/kubernetes@v1.38.0-beta.0 requires
	sigs.k8s.io/structured-merge-diff/v7@v7.0.1: reading https://proxy.golang.org/sigs.k8s.io/structured-merge-diff/v7/@v/v7.0.1.zip: 403 Forbidden
	server response: This module version is not available.
go: k8s.io/kubernetes@v1.38.0-beta.0 requires
	k8s.io/ktesting@v0.38.0-beta.0: reading https://proxy.golang.org/k8s.io/ktesting/@v/v0.38.0-beta.0.info: 403 Forbidden
	server response: This module version is not available.
"""


def test_modules_the_proxy_refuses_are_named_not_the_network():
    error = gotool.failure("`go mod tidy` of the wrapper", REFUSED_TIDY, "Go's own error is above")
    text = str(error)
    assert "\n" not in text and "check the network" not in text
    assert "sigs.k8s.io/structured-merge-diff/v7 v7.0.1 (403 Forbidden)" in text
    assert "k8s.io/ktesting v0.38.0-beta.0 (403 Forbidden)" in text
    # Negative control: a real network failure keeps the network hint.
    offline = gotool.failure("`go mod tidy`", "go: k8s.io/api@v0.36.3: Get \"https://proxy.golang.org/...\": dial tcp: "
                                              "lookup proxy.golang.org: no such host", "x")
    assert gotool.refused_modules(offline.message) == [] and offline.hint == gotool.NETWORK_HINT

