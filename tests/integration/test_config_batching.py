"""Opportunistic batching judged by the real example scheduler (issue 31).

Uses the suite's one build of examples/underlay/scheduler.yaml (`built_example_scheduler`): the
UnderlayIPLimit plugin signs pods, the example patch's in-tree AcmeSchedulable filter does not, so
one binary gives both a profile that keeps batching and one that loses it (the negative control).

Measured cost beyond the shared build: the scheduler started natively ~2 s, config.validate through
the CLI ~15 s (one throw-away container each).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from scheduler_build import spec as spec_mod
from scheduler_build.config import batching, render
from scheduler_build.config import validate as config_validate

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/underlay/scheduler.yaml"
DISABLING = "Disabling signatures for profile"
ACME_PROFILE = {"schedulerName": "acme-filtered", "plugins": {"filter": {"enabled": [{"name": "AcmeSchedulable"}]}}}


def _example_config(extenders: bool) -> dict:
    spec = spec_mod.load(EXAMPLE, check_files=False)
    doc = yaml.safe_load(render.config_text(spec))
    if not extenders:
        doc.pop("extenders", None)
    doc["leaderElection"] = {"leaderElect": False}
    doc["profiles"].append(ACME_PROFILE)
    return doc


def _start(binary: Path, doc: dict, tmp_path: Path, timeout: float = 60) -> str:
    """Start the scheduler for real against an unreachable API server; its log up to "Starting"."""
    (tmp_path / "kubeconfig").write_text(config_validate.DUMMY_KUBECONFIG)
    doc = dict(doc, clientConnection={"kubeconfig": str(tmp_path / "kubeconfig")})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(doc))
    proc = subprocess.Popen([str(binary), f"--config={tmp_path / 'config.yaml'}", "--secure-port=0", "--v=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        for line in proc.stdout:
            lines.append(line)
            if "Starting Kubernetes Scheduler" in line or time.monotonic() > deadline:
                break
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return "".join(lines)


def test_the_started_example_scheduler_batches_its_plugin_profile(built_example_scheduler, tmp_path):
    output = _start(built_example_scheduler.binary, _example_config(extenders=False), tmp_path)
    assert "Starting Kubernetes Scheduler" in output, output[-3000:]
    said = batching.parse_output(output)
    assert "underlay-scheduler" not in said, [l for l in output.splitlines() if DISABLING in l]
    assert "underlay-scheduler-spread" not in said
    # Negative control: the same binary does log it for a profile enabling a filter without SignPod.
    assert said["acme-filtered"].unsigned == ["AcmeSchedulable"] and not said["acme-filtered"].extenders


def test_config_validate_names_the_extender_and_the_unsigned_plugin(built_example_scheduler, tmp_path):
    raw = yaml.safe_load(EXAMPLE.read_text())
    raw["plugins"][0]["path"] = str(EXAMPLE.parent / raw["plugins"][0]["path"])
    raw["patches"] = [str((EXAMPLE.parent / p).resolve()) for p in raw["patches"]]
    raw["profiles"].append(ACME_PROFILE)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(raw))
    argv = [sys.executable, "-m", "invoke", "config.validate", "--spec", str(spec),
            "--binary", str(built_example_scheduler.binary)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [l for l in done.stdout.splitlines() if l.startswith("batching:")]
    assert len(lines) == 3, done.stdout
    underlay, spread, acme = lines
    assert underlay.startswith("batching: profile underlay-scheduler: off (extenders configured: http")
    assert "SignPod" not in underlay  # UnderlayIPLimit signs: only the extender turns it off
    assert spread.startswith("batching: profile underlay-scheduler-spread: off (extenders configured")
    assert acme.startswith("batching: profile acme-filtered: off (plugins without SignPod: AcmeSchedulable;")
    assert "warning: profile acme-filtered schedules without opportunistic batching" in done.stderr
    refused = subprocess.run(argv + ["--require-batching"], cwd=REPO, capture_output=True, text=True)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert "lose opportunistic batching (--require-batching)" in refused.stderr
    assert "Traceback" not in refused.stderr
