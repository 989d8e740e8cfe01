"""Messages, hints and generated headers name the command the user ran (issue 42): `inv TASK` under invoke's
`inv`, `scheduler-build TASK` under the console script, through errors.for_program. Both entry points run for
real (subprocesses); the in-process checks set errors.PROGRAM as each program's run does."""

from __future__ import annotations

import re

import pytest

from scheduler_build import errors
from scheduler_build.explain import record
from scheduler_build.settings import files as settings_files
from tests.unit.commands.test_init import REPO, run

POLICY = REPO / "tests" / "data" / "config" / "policies" / "priorities.yaml"
OTHER = {"inv": "scheduler-build", "scheduler-build": "inv"}


def _names_only(text: str, program: str) -> None:
    """`text` names tasks as `program TASK`, never as the other program's."""
    assert re.search(rf"(?<![\w./-]){re.escape(program)} [a-z]", text), text
    assert not re.search(rf"(?<![\w./-]){re.escape(OTHER[program])} [a-z]", text), text


@pytest.mark.parametrize("program", ["inv", "scheduler-build"])
def test_the_migrated_files_header_names_the_program_that_wrote_it(tmp_path, program):
    out = tmp_path / "config.yaml"
    proc = run(program, ["config.migrate-policy", str(POLICY), "--out", str(out)], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # 1: migrated with warnings, still written
    header = out.read_text().splitlines()[0]
    assert header == f"# Migrated from a legacy scheduler Policy by `{program} config.migrate-policy`."


@pytest.mark.parametrize("program", ["inv", "scheduler-build"])
def test_an_unknown_setting_variables_hint_names_where_the_program_lists_settings(tmp_path, program):
    prefix = "INVOKE" if program == "inv" else "SCHEDULER_BUILD"
    proc = run(program, ["config.migrate-policy", str(POLICY)], tmp_path, **{f"{prefix}_K8S_NOTHING_LIKE_IT": "1"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert ("docs/settings.md" if program == "inv" else "`scheduler-build help settings`") in proc.stderr, proc.stderr


@pytest.mark.parametrize("program", ["inv", "scheduler-build"])
def test_explain_hints_name_the_program(monkeypatch, program):
    monkeypatch.setattr(errors, "PROGRAM", [program])
    monkeypatch.setattr(settings_files, "PROGRAM", errors.PROGRAM)
    for label in (None, "x"):  # no --spec: both causes; a label of the spec's it has (so: no recorder)
        hint = record.explain({"metadata": {"name": "p", "labels": {"x": "1"}}}, pod_label=label)["hint"]
        _names_only(hint, program)
    assert settings_files.settings_list() == ("docs/settings.md" if program == "inv" else f"`{program} help settings`")


def test_the_negative_control_a_hard_wired_name_is_caught():
    with pytest.raises(AssertionError):
        _names_only("run `scheduler-build build --debuggable`, then `inv image.build`", "inv")
