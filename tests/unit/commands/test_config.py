"""config.migrate-policy's decisions (notes vs warnings, exit codes, nothing written on failure, JSON
comments at their line, the scheduler name) and `--json` of config.validate / render / migrate-policy.
Units on the real migration; the CLI cases run `inv` in a subprocess (integration, like test_input_errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_build import owned
from scheduler_build.config import legacy_policy as policy
from scheduler_build.errors import UserError
from scheduler_build.config.field_lines import field_line
from tests.integration.test_input_errors import BOMB, INV, assert_one_line, run

EXACT = {"kind": "Policy", "predicates": [{"name": "PodFitsResources"}, {"name": "HostName"}],
         "priorities": [{"name": "LeastRequestedPriority", "weight": 1}, {"name": "ImageLocalityPriority", "weight": 0}]}
LOSSY = {"kind": "Policy", "predicates": [{"name": "PodFitsResources"}, {"name": "CheckNodeMemoryPressure"}]}


def test_notes_are_not_warnings():
    exact = policy.migrate(EXACT)
    assert exact.warnings == []
    assert any("NodeUnschedulable: added as a filter" in n for n in exact.notes)
    assert any("weight 0 disabled it" in n for n in exact.notes)
    assert "# Every field had an equivalent." in exact.text() and "# NOTE: " in exact.text()
    lossy = policy.migrate(LOSSY)
    assert [w.split(":")[0] for w in lossy.warnings] == ["predicates[1] CheckNodeMemoryPressure"]
    assert lossy.to_dict()["warnings"] == lossy.warnings and lossy.to_dict()["notes"] == lossy.notes


@pytest.mark.parametrize("name", ["Bad Name", "UPPER", "-lead", "trail-", "a" * 254, ""])
def test_scheduler_name_must_be_a_dns_subdomain(name):
    with pytest.raises(UserError, match="not a DNS-1123 subdomain"):
        policy.migrate(EXACT, name)


def test_scheduler_name_accepted():
    assert policy.migrate(EXACT, "acme.scheduler-2").config["profiles"][0]["schedulerName"] == "acme.scheduler-2"


@pytest.mark.parametrize("text, line", [
    ('{\n  "kind": "Policy",\n  // a comment\n  "apiVersion": "v1"\n}\n', "line 3, column 3"),
    ('// leading\n// comments\n{"kind": "Policy"}\n', "line 1, column 1"),
    ('{\n  "kind": "Policy", // trailing\n  "apiVersion": "v1"\n}\n', "line 2, column 21"),
    ('/* block\n */\n{"kind": "Policy"}\n', "line 1, column 1"),
])
def test_json_comments_are_reported_at_their_line(text, line):
    with pytest.raises(UserError) as err:
        policy.parse_text(text, "p.json")
    assert f"p.json: {line}: a comment; JSON has none" in str(err.value)


@pytest.mark.parametrize("field, line", [
    ("name", 1), ("kubernetes.version", 4), ("profiles[1].plugins.score.enabled[0].weight", 9),
    ("profiles[1].nope", 7), ("profiles[7]", 5), ("", 1),
])
def test_field_line(tmp_path, field, line):
    spec = tmp_path / "s.yaml"
    spec.write_text('name: x\nversion: "1"\nkubernetes:\n  version: "1.36"\nprofiles:\n- schedulerName: a\n'
                    "- schedulerName: b\n  plugins:\n    score: {enabled: [{name: X, weight: -1}]}\n")
    assert field_line(spec, field) == line


def test_field_line_of_an_unreadable_file(tmp_path):
    (tmp_path / "bomb.yaml").write_text(BOMB)
    assert field_line(tmp_path / "missing.yaml", "name") is None
    assert field_line(tmp_path / "bomb.yaml", "a") is None


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    return path


def test_require_batching_with_fields_only_refuses_an_extender():
    """The example spec configures an extender, which turns batching off whatever the binary is: judged
    without the binary. The negative control: without --require-batching the same check passes."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[3]
    argv = [sys.executable, "-m", "scheduler_build", "config.validate", "--spec", "examples/underlay/scheduler.yaml",
            "--fields-only"]
    refused = subprocess.run([*argv, "--require-batching"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "lose opportunistic batching (--require-batching)" in refused.stderr and "extenders configured" in refused.stderr
    passed = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=300)
    assert passed.returncode == 0, passed.stderr
