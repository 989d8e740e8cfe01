"""The release pipelines in ci/: linted by real linters where they install, by a schema check otherwise.

- GitHub Actions workflows: actionlint, installed from the Go module proxy into the
  toolkit's cache (`go install github.com/rhysd/actionlint/cmd/actionlint@latest`).
- Drone: the drone CLI does not install from the Go module proxy (the proxy answers
  403 "not available" for github.com/drone/drone-cli/drone), so `drone_problems`
  checks the pipelines against Drone's documented format (docs.drone.io, pipeline
  types docker/exec/kubernetes/ssh/..., steps, trigger, from_secret).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO / "ci" / "github").glob("*.yml"))
DRONE = REPO / "ci" / "drone.yml"

DRONE_KINDS = {"pipeline", "secret", "signature", "template"}
DRONE_TYPES = {"docker", "exec", "kubernetes", "ssh", "digitalocean", "macstadium", "vm", "nomad"}
DRONE_PIPELINE_KEYS = {"kind", "type", "name", "platform", "node", "environment", "steps", "trigger", "depends_on",
                       "workspace", "clone", "concurrency", "services", "volumes", "image_pull_secrets", "node_selector",
                       "tolerations", "metadata", "host_aliases", "server", "pool", "labels"}
DRONE_STEP_KEYS = {"name", "image", "commands", "environment", "depends_on", "when", "failure", "detach", "privileged",
                   "volumes", "settings", "pull", "entrypoint", "command", "shell", "user", "network_mode", "resources",
                   "working_dir"}
DRONE_TRIGGER_KEYS = {"event", "branch", "ref", "repo", "status", "target", "cron", "action", "instance"}
DRONE_EVENTS = {"push", "pull_request", "tag", "promote", "rollback", "cron", "custom"}
# Pipelines call the invoke tasks only; these are the plumbing lines allowed besides.
ALLOWED_COMMANDS = (re.compile(r"^inv "), re.compile(r"^bash ci/setup\.sh$"), re.compile(r'^export SOURCE_DATE_EPOCH="\$\(git log -1 --format=%ct\)"$'))


def drone_problems(text: str) -> list[str]:
    problems: list[str] = []
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        return [f"not YAML: {exc}"]
    names = set()
    for i, doc in enumerate(docs):
        where = f"document {i + 1}"
        if not isinstance(doc, dict):
            problems.append(f"{where}: not a mapping")
            continue
        if doc.get("kind") not in DRONE_KINDS:
            problems.append(f"{where}: kind {doc.get('kind')!r} is not one of {sorted(DRONE_KINDS)}")
            continue
        if doc["kind"] != "pipeline":
            continue
        name = doc.get("name")
        where = f"pipeline {name!r}"
        if not isinstance(name, str) or not name:
            problems.append(f"{where}: name is required")
        elif name in names:
            problems.append(f"{where}: duplicate pipeline name")
        names.add(name)
        if doc.get("type", "docker") not in DRONE_TYPES:
            problems.append(f"{where}: type {doc.get('type')!r} is unknown")
        for key in set(doc) - DRONE_PIPELINE_KEYS:
            problems.append(f"{where}: unknown key {key!r}")
        steps = doc.get("steps")
        if not isinstance(steps, list) or not steps:
            problems.append(f"{where}: steps must be a non-empty list")
            steps = []
        step_names: list[str] = []
        for step in steps:
            if not isinstance(step, dict) or not step.get("name"):
                problems.append(f"{where}: every step needs a name")
                continue
            sw = f"{where} step {step['name']!r}"
            if step["name"] in step_names:
                problems.append(f"{sw}: duplicate step name")
            for key in set(step) - DRONE_STEP_KEYS:
                problems.append(f"{sw}: unknown key {key!r}")
            if doc.get("type", "docker") in ("docker", "kubernetes") and not step.get("image"):
                problems.append(f"{sw}: {doc.get('type', 'docker')} steps need an image")
            if doc.get("type") == "exec" and "image" in step:
                problems.append(f"{sw}: exec steps run on the host and take no image")
            commands = step.get("commands")
            if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
                problems.append(f"{sw}: commands must be a list of strings")
            for dep in step.get("depends_on") or []:
                if dep not in step_names:
                    problems.append(f"{sw}: depends_on {dep!r} is not an earlier step")
            for key, value in (step.get("environment") or {}).items():
                if isinstance(value, dict) and set(value) != {"from_secret"}:
                    problems.append(f"{sw}: environment {key} must be a string or {{from_secret: name}}")
            step_names.append(step["name"])
        trigger = doc.get("trigger") or {}
        for key in set(trigger) - DRONE_TRIGGER_KEYS:
            problems.append(f"{where}: unknown trigger key {key!r}")
        events = trigger.get("event", [])
        events = events.get("include", []) if isinstance(events, dict) else events
        for event in events if isinstance(events, list) else [events]:
            if event not in DRONE_EVENTS:
                problems.append(f"{where}: unknown trigger event {event!r}")
    return problems


def all_commands() -> list[str]:
    commands = []
    for doc in yaml.safe_load_all(DRONE.read_text()):
        for step in (doc or {}).get("steps", []):
            commands += step.get("commands", [])
    for workflow in WORKFLOWS:
        for job in yaml.safe_load(workflow.read_text())["jobs"].values():
            for step in job["steps"]:
                if "run" in step and not step.get("name", "").startswith(("Keep the builder", "Let the cache", "Reproducible")):
                    run = re.sub(r'^sudo -E env "PATH=\$PATH" ', "", step["run"].strip())
                    commands.append(re.sub(r" \| tee pushed\.txt$", "", run))
    return commands


def test_drone_pipelines_follow_drones_format():
    assert drone_problems(DRONE.read_text()) == []
    names = [d["name"] for d in yaml.safe_load_all(DRONE.read_text()) if d]
    assert names == ["pull-request", "release"]


@pytest.mark.parametrize("broken, words", [
    ("kind: pipeline\ntype: exec\nname: x\nsteps:\n- name: a\n  commandz: [inv test]\n", "unknown key 'commandz'"),
    ("kind: pipeline\ntype: docker\nname: x\nsteps:\n- name: a\n  commands: [inv test]\n", "need an image"),
    ("kind: pipeline\ntype: exec\nname: x\nsteps:\n- name: a\n  commands: [inv test]\n  depends_on: [b]\n", "not an earlier step"),
    ("kind: pipeline\ntype: exec\nname: x\nsteps:\n- name: a\n  commands: [inv test]\ntrigger:\n  event: [merge]\n", "unknown trigger event"),
    ("kind: pipeline\ntype: exec\nname: x\nsteps:\n- name: a\n  commands: [inv test]\n  environment:\n    P: {secret: x}\n", "from_secret"),
    ("kind: pipelin\n", "kind"),
])
def test_drone_check_catches_mistakes(broken, words):
    assert any(words in p for p in drone_problems(broken)), drone_problems(broken)


def test_pipelines_call_invoke_tasks_only_and_take_secrets_from_the_store():
    commands = all_commands()
    assert any(c.startswith("inv image.push") for c in commands) and any(c == "inv test" for c in commands)
    for command in commands:
        assert any(p.match(command) for p in ALLOWED_COMMANDS), command
    drone = DRONE.read_text()
    assert "from_secret: registry_password" in drone
    for workflow in WORKFLOWS:
        text = workflow.read_text()
        for line in text.splitlines():
            if "PASSWORD" in line and ":" in line and not line.strip().startswith("#"):
                assert "${{ secrets." in line, line
    release = yaml.safe_load((REPO / "ci/github/release.yml").read_text())
    assert release[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    pr = yaml.safe_load((REPO / "ci/github/pull-request.yml").read_text())
    assert "pull_request" in pr[True]
    for workflow in (release, pr):
        uses = [s.get("uses", "") for s in workflow["jobs"][next(iter(workflow["jobs"]))]["steps"]]
        assert any(u.startswith("actions/cache@") for u in uses)


def actionlint_binary() -> str:
    from scheduler_build import settings

    bin_dir = settings.cache_dir() / "tools" / "bin"
    binary = bin_dir / "actionlint"
    if not binary.exists():
        go = shutil.which("go") or "/usr/local/go/bin/go"
        env = dict(os.environ, GOBIN=str(bin_dir), GOFLAGS="-mod=mod")
        proc = subprocess.run([go, "install", "github.com/rhysd/actionlint/cmd/actionlint@latest"], capture_output=True, text=True, env=env, cwd="/", timeout=600)
        assert proc.returncode == 0, proc.stderr
    return str(binary)


@pytest.mark.integration
def test_actionlint_passes_the_workflows_and_catches_a_broken_one(tmp_path):
    binary = actionlint_binary()
    proc = subprocess.run([binary, "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOWS[0].read_text().replace("runs-on: ubuntu-24.04", "runs-on: ubuntu-24.04\n    timeout-minutes: ${{ secrets.NOPE.x }}\n    stepz: []"))
    proc = subprocess.run([binary, "-no-color", str(broken)], capture_output=True, text=True)
    assert proc.returncode != 0 and "stepz" in proc.stdout
