"""Integration tests beside tests/unit/commands/test_config.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: config.migrate-policy's decisions (notes vs warnings, exit codes, nothing written on failure, JSON
"""

from __future__ import annotations
import json
from pathlib import Path
import pytest
from scheduler_build import owned
from scheduler_build.config import legacy_policy as policy
from scheduler_build.errors import UserError
from scheduler_build.config.field_lines import field_line
from tests.integration.test_input_errors import BOMB, INV, assert_one_line, run
from tests.unit.commands.test_config import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    EXACT, LOSSY, _write,
)


def test_strict_passes_with_notes_and_fails_on_warnings_writing_nothing(tmp_path):
    exact = run(INV + ["config.migrate-policy", str(_write(tmp_path, EXACT)), "--strict", "--out", str(tmp_path / "o.yaml")])
    assert exact.returncode == 0, exact.stderr[-2000:]
    assert "note: NodeUnschedulable" in exact.stderr and (tmp_path / "o.yaml").is_file()
    lossy = run(INV + ["config.migrate-policy", str(_write(tmp_path, LOSSY)), "--strict", "--out", str(tmp_path / "l.yaml")])
    assert_one_line(lossy, 1, "1 part of the Policy has no exact v1 equivalent; nothing written")
    assert "warning: predicates[1] CheckNodeMemoryPressure" in lossy.stderr
    assert not (tmp_path / "l.yaml").exists() and lossy.stdout == ""


@pytest.mark.parametrize("argv, code, substring", [
    (["--scheduler-name", "Bad Name"], 2, "scheduler name 'Bad Name' (--scheduler-name, config.scheduler_name): not a DNS"),
    # Not a ConfigMap: a key that would select nothing is refused rather than silently ignored.
    (["--configmap-key", "x"], 2, "--configmap-key 'x' given, but the file is a Policy, not a ConfigMap"),
])
def test_migrate_policy_flags(tmp_path, argv, code, substring):
    proc = run(INV + ["config.migrate-policy", str(_write(tmp_path, EXACT)), "--out", str(tmp_path / "o.yaml"), *argv])
    if code:
        assert_one_line(proc, code, substring)
        assert not (tmp_path / "o.yaml").exists()
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]


def test_migrate_policy_json(tmp_path):
    proc = run(INV + ["config.migrate-policy", str(_write(tmp_path, LOSSY)), "--json"])
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["ok"] and data["out"] is None
    assert len(data["warnings"]) == 1 and data["notes"] and "kind: KubeSchedulerConfiguration" in data["config"]
    strict = run(INV + ["config.migrate-policy", str(_write(tmp_path, LOSSY)), "--json", "--strict"])
    data = json.loads(strict.stdout)
    assert strict.returncode == 1 and not data["ok"] and "config" not in data


def test_validate_json_lists_every_field_error_with_its_path(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text('name: Bad_Name\nversion: "0.1.0"\nkubernetes:\n  version: "1.36"\n'
                    "profiles:\n- schedulerName: X Y\n")
    proc = run(INV + ["config.validate", "--fields-only", "--spec", str(spec), "--json"])
    assert_one_line(proc, 2, "2 errors in the build spec")
    data = json.loads(proc.stdout)
    assert data["ok"] is False
    assert [(e["file"], e["line"], e["path"]) for e in data["errors"]] == [
        (str(spec), 1, "name"), (str(spec), 6, "profiles[0].schedulerName")]
    good = run(INV + ["config.validate", "--fields-only", "--json"])
    data = json.loads(good.stdout)
    assert good.returncode == 0 and data["ok"] and data["errors"] == [] and data["kubernetes_version"].startswith("v1.")


def test_render_json_lists_the_files_written(tmp_path):
    proc = run(INV + ["config.render", "--out", str(tmp_path / "out"), "--k8s-version", "v1.36.3", "--json"])
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["out"] == str(tmp_path / "out")
    assert sorted(Path(f).name for f in data["files"]) == sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != owned.RECORD)
    assert all(Path(f).is_file() for f in data["files"]) and data["image"].endswith(":v1.36.3-0.1.0")
