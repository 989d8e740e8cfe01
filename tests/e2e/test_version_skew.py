"""`inv deploy --dry-run` refuses a scheduler newer than the API server (Kubernetes' version skew policy), and
`--allow-version-skew` lets it through; `doctor --kubeconfig` and `cluster.status` show the same pair.

The API server is the session's real kube-apiserver (tests/e2e/conftest.py, the suite's default minor).
The scheduler's version is decided from the spec (kubernetes.version, an exact release of the next pinned
minor), as `deploy --spec` decides it: nothing is compiled for it. Cost: four `inv` runs, no build
(measured about 25 s on 2 shared cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testkit import versions as pinned

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parent.parent.parent


def _inv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def _spec(tmp_path: Path, name: str, version: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "version": "1.0.0", "kubernetes": {"version": version},
                                    "namespace": "default"}))
    return path


def newer_minor_than(server: str) -> str:
    """The pinned release of the minor after the server's: what the suite resolves, never a live listing."""
    major, minor = server.lstrip("v").split(".")[:2]
    served = pinned.current().served
    newer = f"{major}.{int(minor) + 1}"
    assert newer in served, f"the pinned versions ({served}) have no minor after the API server's {server}"
    return served[newer]


def test_a_scheduler_one_minor_newer_than_the_api_server_is_refused_unless_allowed(control_plane, tmp_path, unique):
    server = control_plane.version
    newer = newer_minor_than(server)
    spec = _spec(tmp_path, f"skew-{unique}", newer)
    common = ["deploy", "--kubeconfig", control_plane.admin_kubeconfig, "--spec", str(spec), "--image", "r/s:1",
              "--dry-run", "--json"]

    refused = _inv(*common)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    [line] = [line for line in refused.stderr.splitlines() if "version skew refused" in line]
    assert newer in line and server in line and "never newer" in line and "--allow-version-skew" in line, line
    assert refused.stdout == ""  # refused before anything was applied (nothing reported)

    allowed = _inv(*common, "--allow-version-skew")
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    report = json.loads(allowed.stdout)
    assert report["version_skew"]["scheduler"] == newer and report["version_skew"]["apiserver"] == server
    assert report["version_skew"]["ok"] is False
    assert {a["kind"] for a in report["applied"]} >= {"Deployment", "ConfigMap"}

    # negative control: the server's own release is within the policy, with no flag
    same = _inv("deploy", "--kubeconfig", control_plane.admin_kubeconfig, "--spec",
                str(_spec(tmp_path, f"same-{unique}", server)), "--image", "r/s:1", "--dry-run", "--json")
    assert same.returncode == 0, same.stderr[-3000:]
    assert json.loads(same.stdout)["version_skew"]["ok"] is True


def test_doctor_and_cluster_status_show_the_pair(control_plane, tmp_path, unique):
    server = control_plane.version
    newer = newer_minor_than(server)
    spec = _spec(tmp_path, f"pair-{unique}", newer)
    status = _inv("cluster.status", "--state-dir", str(control_plane.state_dir), "--spec", str(spec))
    assert status.returncode == 0, status.stderr[-3000:]
    pair = json.loads(status.stdout)["version_skew"]
    assert (pair["scheduler"], pair["apiserver"], pair["ok"]) == (newer, server, False), pair

    doctor = _inv("doctor", "--kubeconfig", control_plane.admin_kubeconfig, "--spec", str(spec), "--json")
    [check] = [c for c in json.loads(doctor.stdout) if c["name"] == "version skew"]
    assert not check["ok"] and newer in check["detail"] and server in check["detail"], check
    assert doctor.returncode == 1  # a refused pair fails doctor like any FAIL line
