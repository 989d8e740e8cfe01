"""`init` writes a starter spec the validator accepts; hints name the program being run and nothing a
pip user lacks; doctor checks the Go module proxy, the cache, HOME/GOPATH (issue 22, examples 6 and 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CHECKOUT_ONLY = ("README", "examples/", "ci/setup.sh")


def run(program: str, argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_BUILD_", "INVOKE_"))}
    full.update(PYTHONPATH=str(REPO), **env)
    cli = [sys.executable, "-m", "scheduler_build"] if program == "scheduler-build" else ["inv", "-r", str(REPO)]
    return subprocess.run([*cli, *argv], cwd=cwd, env=full, capture_output=True, text=True, timeout=300)


def test_init_writes_a_spec_that_validates_and_prints_the_next_three_commands(tmp_path):
    proc = run("scheduler-build", ["init", "proj"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    spec = tmp_path / "proj" / "scheduler.yaml"
    assert proc.stdout.strip() == str(Path("proj") / "scheduler.yaml") and spec.is_file()
    assert "# " in spec.read_text().splitlines()[0]  # commented
    steps = proc.stderr.split("next:\n", 1)[1].splitlines()
    assert len(steps) == 3 and all(s.strip().startswith("scheduler-build ") for s in steps), steps
    checked = run("scheduler-build", ["config.validate", str(spec), "--fields-only"], tmp_path)
    assert checked.returncode == 0 and checked.stdout.startswith("ok: "), checked.stderr[-2000:]
    again = run("scheduler-build", ["init", "proj"], tmp_path)
    assert again.returncode == 2 and "exists; nothing written" in again.stderr


def test_init_with_a_plugin_scaffolds_it_beside_the_spec(tmp_path):
    proc = run("scheduler-build", ["init", "--plugin", "NodeLimit", "--no-tidy"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "plugins" / "node-limit" / "go.mod").is_file()
    text = (tmp_path / "scheduler.yaml").read_text()
    assert "path: ./plugins/node-limit" in text and "- name: NodeLimit" in text
    checked = run("scheduler-build", ["config.validate", "--fields-only"], tmp_path)  # default spec.path: scheduler.yaml
    assert checked.returncode == 0 and "1 from the spec's plugins" in checked.stderr, checked.stderr[-2000:]


@pytest.mark.parametrize("program", ["scheduler-build", "inv"])
def test_a_missing_spec_hint_names_the_running_program(tmp_path, program):
    proc = run(program, ["config.render", "--spec", "nope.yaml"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"`{program} init DIR` writes a commented starter spec" in proc.stderr, proc.stderr
    if program == "scheduler-build":
        assert not [word for word in CHECKOUT_ONLY if word in proc.stderr], proc.stderr


def test_an_empty_directory_has_no_default_spec_to_miss_silently(tmp_path):
    """A pip user in an empty directory: the default spec is ./scheduler.yaml (what init writes)."""
    proc = run("scheduler-build", ["config.validate", "--fields-only"], tmp_path)
    assert proc.returncode == 2 and "scheduler.yaml" in proc.stderr
    assert "`scheduler-build init` writes a starter one" in proc.stderr or "scheduler-build init" in proc.stderr
    assert not [word for word in CHECKOUT_ONLY if word in proc.stderr], proc.stderr


def _doctor(tmp_path: Path, **env: str) -> dict:
    proc = run("scheduler-build", ["doctor", "--json"], tmp_path, **env)
    return {check["name"]: check for check in json.loads(proc.stdout)}


def test_doctor_fails_without_the_go_module_proxy_and_names_what_works_offline(tmp_path):
    checks = _doctor(tmp_path, GOPROXY="http://127.0.0.1:9")
    proxy = checks["go module proxy"]
    assert proxy["ok"] is False and proxy["required"] is True
    assert "--k8s-version v1.36.3" in proxy["fix"]
    assert _doctor(tmp_path)["go module proxy"]["ok"] is True  # negative control: the real proxy answers


def test_doctor_checks_the_cache_and_home(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory should be\n")
    checks = _doctor(tmp_path, SCHEDULER_BUILD_PATHS_CACHE_DIR=str(blocked / "cache"))
    assert checks["cache dir"]["ok"] is False and "paths.cache_dir" in checks["cache dir"]["fix"]
    assert _doctor(tmp_path, SCHEDULER_BUILD_PATHS_CACHE_DIR=str(tmp_path / "c"))["cache dir"]["ok"] is True
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "GOPATH")}
    proc = subprocess.run([sys.executable, "-m", "scheduler_build", "doctor", "--json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**env, "PYTHONPATH": str(REPO)})
    home = {c["name"]: c for c in json.loads(proc.stdout)}["HOME/GOPATH"]
    assert home["ok"] is False and "HOME" in home["fix"]


def test_every_inv_in_the_code_is_rewritten_for_scheduler_build(monkeypatch):
    """Every string in the package naming `inv TASK` (quoted or bare, in hints, help texts, doctor lines)
    reads `scheduler-build TASK` when that program runs; words that merely contain inv stay as they are."""
    import ast
    import re

    from scheduler_build import errors

    monkeypatch.setattr(errors, "PROGRAM", ["scheduler-build"])
    package = Path(__file__).resolve().parents[3] / "scheduler_build"
    texts = [node.value for path in package.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"\binv [a-z]", node.value)]
    assert len(texts) > 20  # the scan really reads the hints
    left = [text for text in texts if re.search(r"(?<![\w./-])inv [a-z]", errors.for_program(text))]
    assert left == []
    assert errors.for_program("render it first: inv config.render --spec S") == \
        "render it first: scheduler-build config.render --spec S"
    for unchanged in ("invoke inv", "the inventory", "./inv x", "--inv x", "an inv"):
        assert errors.for_program(unchanged) == unchanged


def test_init_refuses_a_name_its_own_validator_refuses_and_writes_nothing(tmp_path):
    refused = run("scheduler-build", ["init", "proj", "--name", "My_Sched"], tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--name 'My_Sched'" in refused.stderr and "DNS-1123" in refused.stderr and "e.g. my-sched" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "proj").exists()
    accepted = run("scheduler-build", ["init", "proj", "--name", "my-sched"], tmp_path)  # the negative control
    assert accepted.returncode == 0, accepted.stderr
