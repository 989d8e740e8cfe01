"""Front-door faults of settings files and variables: each is one line naming the source and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build.settings import files as settings_files
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]


def test_a_mistyped_variable_gets_a_did_you_mean(monkeypatch):
    monkeypatch.setenv("SCHEDULER_BUILD_BUILD_NAEM", "x")
    with pytest.raises(UserError, match="environment variable SCHEDULER_BUILD_BUILD_NAEM: not a setting") as err:
        settings_files.check_environment("SCHEDULER_BUILD")
    assert err.value.hint == "did you mean SCHEDULER_BUILD_BUILD_NAME?"


def test_known_variables_and_credentials_pass(monkeypatch):
    """Negative control: a real setting, the registry credentials, and invoke's own INVOKE_RUN_* under `inv`."""
    for var in ("SCHEDULER_BUILD_BUILD_NAEM",):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SCHEDULER_BUILD_BUILD_NAME", "x")
    monkeypatch.setenv("SCHEDULER_BUILD_REGISTRY_USERNAME", "bot")
    monkeypatch.setenv("INVOKE_RUN_ECHO", "1")
    settings_files.check_environment("SCHEDULER_BUILD")
    settings_files.check_environment("INVOKE")
    monkeypatch.setenv("INVOKE_BUILD_NAEM", "x")  # but one of our sections under `inv` is checked
    with pytest.raises(UserError, match="INVOKE_BUILD_NAEM"):
        settings_files.check_environment("INVOKE")


def test_a_section_with_every_key_commented_out_is_empty():
    settings_files.check_file("scheduler-build.yaml", {"build": None})
    with pytest.raises(UserError, match="where the section build is meant"):  # a value there still is refused
        settings_files.check_file("scheduler-build.yaml", {"build": "x"})


def _program(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_BUILD_")}, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", "from scheduler_build.cli.app import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("given, says", [
    ("missing.yaml", "--config missing.yaml: no such file"),
    (".", "--config .: a directory, not a settings file"),
    ("settings.txt", "--config settings.txt: settings files are read by their extension"),
])
def test_config_flag_faults_are_one_line(tmp_path, given, says):
    (tmp_path / "settings.txt").write_text("k8s: {version: '1.36'}\n")
    (tmp_path / "ok.yaml").write_text("k8s: {version: '1.36'}\n")
    run = _program("--config", given, "help", "settings", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith(f"error: {says}") and run.stderr.count("\n") == 1
    assert _program("--config", "ok.yaml", "help", "settings", cwd=tmp_path).returncode == 0  # negative control


@pytest.mark.parametrize("argv, says", [
    (["build", "--json=yes"], "build: --json is a switch and takes no value ('--json=yes'); give --json to turn it on, "
                              "or leave it out"),
    (["image.build", "--force=false"], "--force to turn it on, --no-force to turn it off"),
])
def test_a_switch_given_a_value_is_named_not_taken_for_a_task(tmp_path, argv, says):
    run = _program(*argv, cwd=tmp_path)
    assert run.returncode == 2 and says in run.stderr and "unknown task" not in run.stderr
