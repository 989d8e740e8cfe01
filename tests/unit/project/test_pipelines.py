"""The release pipelines in ci/: linted by real linters and real schemas.

- Drone: check-jsonschema's vendored Drone schema (`--builtin-schema vendor.drone-ci`),
  one YAML document at a time, as the schema describes one pipeline. (The drone CLI
  does not install from the Go module proxy.)
- GitHub Actions workflows: check-jsonschema's GitHub workflow schema, and actionlint,
  installed from the Go module proxy into the toolkit's cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
WORKFLOWS = sorted((REPO / "ci" / "github").glob("*.yml"))
DRONE = REPO / "ci" / "drone.yml"

# Pipelines call the invoke tasks only; these are the plumbing lines allowed besides.
ALLOWED_COMMANDS = (re.compile(r"^inv "), re.compile(r"^bash ci/setup\.sh$"), re.compile(r'^export SOURCE_DATE_EPOCH="\$\(git log -1 --format=%ct\)"$'),
                    re.compile(r"^python -m pip install -q -e \.$"),
                    re.compile(r'^echo "matrix=\$\(inv release\.matrix --json --spec "\$SPEC"\)" >> "\$GITHUB_OUTPUT"$'))


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess:
    """The real check-jsonschema CLI with one of its vendored schemas (no network)."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def drone_documents(text: str, directory: Path) -> list[Path]:
    """Each YAML document of a Drone file as its own file (anchors resolved): the schema is per pipeline."""
    paths = []
    for i, doc in enumerate(d for d in yaml.safe_load_all(text) if d is not None):
        path = directory / f"drone-{i + 1}.yml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        paths.append(path)
    return paths


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
                    commands.append(re.sub(r" > pushed\.txt$", "", run))
    return commands


def test_drone_pipelines_pass_drones_schema(tmp_path):
    documents = drone_documents(DRONE.read_text(), tmp_path)
    names = [yaml.safe_load(p.read_text())["name"] for p in documents]
    assert names == ["pull-request", "release", "pull-request-docker", "release-docker"]
    proc = check_jsonschema("vendor.drone-ci", *documents)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_drone_exec_step_carries_the_cache_environment():
    for doc in (d for d in yaml.safe_load_all(DRONE.read_text()) if d and d["type"] == "exec"):
        assert "environment" not in doc, f"pipeline {doc['name']}: the exec runner drops a pipeline-level environment"
        for step in doc["steps"]:
            assert step["environment"]["GOMODCACHE"] == "/var/cache/scheduler-build/go-mod", step["name"]


OLD_DRONE = """kind: pipeline
type: exec
name: pull-request
environment:
  GOMODCACHE: /var/cache/scheduler-build/go-mod
steps:
  - name: test
    commands: [inv test]
"""


@pytest.mark.parametrize("broken, words", [
    (OLD_DRONE, "environment"),  # the old file's mistake: exec pipelines take no pipeline-level environment
    (OLD_DRONE.replace("environment:\n  GOMODCACHE: /var/cache/scheduler-build/go-mod\n", "").replace("commands:", "commandz:"), "commandz"),
    ("kind: pipeline\ntype: exec\nname: x\nsteps:\n- name: a\n  commands: [inv test]\n  environment:\n    P: {secret: x}\n", "secret"),
])
def test_drone_schema_catches_mistakes(tmp_path, broken, words):
    documents = drone_documents(broken, tmp_path)
    proc = check_jsonschema("vendor.drone-ci", *documents)
    assert proc.returncode != 0
    verbose = subprocess.run([sys.executable, "-m", "check_jsonschema", "--verbose", "--builtin-schema", "vendor.drone-ci",
                              *map(str, documents)], capture_output=True, text=True).stdout
    assert words in verbose, verbose
    # Without the mistake the same pipeline passes: the failure is the mistake's.
    if broken == OLD_DRONE:
        fixed = broken.replace("environment:\n  GOMODCACHE: /var/cache/scheduler-build/go-mod\n", "")
        assert check_jsonschema("vendor.drone-ci", *drone_documents(fixed, tmp_path)).returncode == 0


def test_github_workflows_pass_the_workflow_schema(tmp_path):
    proc = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOWS[0].read_text().replace("runs-on: ubuntu-24.04", "runs-on: ubuntu-24.04\n    stepz: []", 1))
    proc = check_jsonschema("vendor.github-workflows", broken)
    assert proc.returncode != 0


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
    for job in (release["jobs"]["build"], pr["jobs"]["test"]):
        assert any(s.get("uses", "").startswith("actions/cache@") for s in job["steps"])


def test_drone_docker_steps_run_in_the_local_step_image_and_keep_secrets_to_their_steps():
    from scheduler_build.image import ci_step

    docs = {d["name"]: d for d in yaml.safe_load_all(DRONE.read_text()) if d and d["type"] == "docker"}
    assert sorted(docs) == ["pull-request-docker", "release-docker"]
    for doc in docs.values():
        host = {v["name"]: v["host"]["path"] for v in doc["volumes"]}
        assert host["docker-socket"] == "/var/run/docker.sock"
        for step in doc["steps"]:
            assert (step["image"], step["pull"]) == (ci_step.TAG, "never"), step["name"]
    release = docs["release-docker"]["steps"]
    keyed = {s["name"]: sorted(v["from_secret"] for v in (s.get("environment") or {}).values() if isinstance(v, dict))
             for s in release}
    assert keyed["push"] == ["cosign_key", "cosign_password", "registry_password", "registry_repository", "registry_username"]
    assert [n for n, secrets in keyed.items() if "cosign_key" in secrets] == ["push"]
    builds = [s["commands"][-1].split("--arch ")[1] for s in release if s["name"].startswith("build-")]
    assert builds == release_matrix()["arch"]


def release_matrix() -> dict:
    from scheduler_build import spec
    from scheduler_build.build.matrix import release_matrix as matrix

    return matrix(spec.load(REPO / "examples/underlay/scheduler.yaml"))


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


def test_release_pipelines_sign_verify_and_keep_the_signing_key_to_one_step():
    release = [d for d in yaml.safe_load_all(DRONE.read_text()) if d and d["name"] == "release"][0]
    with_key = [s["name"] for s in release["steps"] if "cosign_key" in str(s.get("environment"))]
    assert with_key == ["push"]
    commands = [c for s in release["steps"] for c in s["commands"]]
    assert any("--sign --key env://COSIGN_KEY" in c for c in commands) and any(c.startswith("inv image.verify") for c in commands)
    # Fan-out: one build step per platform, in parallel (both depend on setup only).
    builds = [s for s in release["steps"] if s["name"].startswith("build-")]
    assert len(builds) == 2 and all(s["depends_on"] == ["setup"] for s in builds)
    assert [s["commands"][-1].split("--arch ")[1] for s in builds] == release_matrix()["arch"]
    # GitHub: the matrix is the spec's (`inv release.matrix --json`), not a list copied into YAML.
    workflow = yaml.safe_load((REPO / "ci/github/release.yml").read_text())
    assert workflow["jobs"]["build"]["strategy"]["matrix"] == "${{ fromJSON(needs.matrix.outputs.matrix) }}"
    assert workflow["jobs"]["build"]["needs"] == "matrix" and workflow["jobs"]["release"]["needs"] == ["matrix", "build"]
    assert "arm64" not in (REPO / "ci/github/release.yml").read_text()
    steps = workflow["jobs"]["release"]["steps"] + workflow["jobs"]["build"]["steps"]
    assert [s["name"] for s in steps if "secrets.COSIGN_KEY" in str(s.get("env"))] == ["Push by digest, sign and attest"]
    assert "env" not in workflow["jobs"]["release"] and "COSIGN" not in str(workflow.get("env"))
