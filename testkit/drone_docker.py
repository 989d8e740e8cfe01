"""A STAND-IN for Drone's docker runner (drone-runner-docker), for tests.

The Go module proxy refuses every Drone runner module, so this does, with the real
Docker engine, what that runner does with a `type: docker` pipeline:

- one workspace volume per pipeline, mounted at /drone/src in every step (the working
  directory); the clone step fills it (here: the test's clone, copied in through the
  engine's archive API, as drone/git cannot be pulled);
- one container per step, from the step's image (`pull: never`: it must be local),
  steps in `depends_on` order (file order when no step declares it), the first failure
  skipping the rest;
- each step's `commands` as one script run by `/bin/sh -e` after `echo + <command>`,
  passed in DRONE_SCRIPT like the runner does;
- environment: Drone's built-in DRONE_* variables, the runner's global environment
  (DRONE_RUNNER_ENVIRON), the pipeline's `environment`, then the step's; `from_secret`
  values come from the secrets given, and only into the steps that declare them;
- volumes: a step's `volumes` bind the pipeline volume of that name (`host.path`, e.g.
  the engine's socket) or a `temp` volume at the step's `path`.

Not done (unused by ci/drone.yml): services, `when` conditions, plugins' `settings`.
Different: the runner puts a pipeline's steps on a network of their own; this machine's
engine has no bridge networking, so the steps share the host's network.
"""

from __future__ import annotations

import base64
import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from testkit.docker_sdk import client

LABEL = {"org.scheduler-build.test": "drone-docker-standin"}


@dataclass
class StepResult:
    name: str
    exit_code: int
    logs: str
    environment: dict[str, str]


@dataclass
class PipelineRun:
    steps: list[StepResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.exit_code == 0 for s in self.steps)

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)


def step_order(steps: list[dict]) -> list[dict]:
    """Topological order of `depends_on` (stable: file order among ready steps)."""
    if not any("depends_on" in s for s in steps):
        return list(steps)
    done: list[str] = []
    ordered: list[dict] = []
    pending = list(steps)
    while pending:
        ready = [s for s in pending if all(d in done for d in s.get("depends_on", []))]
        if not ready:
            raise ValueError(f"depends_on cycle or unknown step among {[s['name'] for s in pending]}")
        ordered.append(ready[0])
        done.append(ready[0]["name"])
        pending.remove(ready[0])
    return ordered


def script(commands: list[str]) -> str:
    lines = ["set -e"]
    for command in commands:
        lines += [f"echo + {_quote(command)}", command]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def environment(pipeline: dict, step: dict, secrets: dict[str, str], builtins: dict[str, str]) -> dict[str, str]:
    env = dict(builtins)
    for source in (pipeline.get("environment") or {}, step.get("environment") or {}):
        for key, value in source.items():
            if isinstance(value, dict):
                env[key] = secrets.get(value["from_secret"], "")  # Drone: an unset secret is empty
            else:
                env[key] = str(value)
    env["DRONE_SCRIPT"] = script(step.get("commands", []))
    return env


def _workspace_tar(source: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(source, arcname="src")
    return buffer.getvalue()


def run_pipeline(pipeline: dict, clone_from: Path, *, secrets: dict[str, str] | None = None,
                 runner_env: dict[str, str] | None = None, event: str = "pull_request",
                 host_paths: dict[str, Path] | None = None) -> PipelineRun:
    """Run one `type: docker` pipeline document; every container and volume it made is removed.

    `host_paths` maps a host volume's path to the directory that plays it on this machine."""
    assert pipeline["kind"] == "pipeline" and pipeline["type"] == "docker", pipeline.get("type")
    docker = client()
    workspace = docker.volumes.create(labels=LABEL)
    temps: dict[str, str] = {}
    builtins = {"CI": "true", "DRONE": "true", "DRONE_WORKSPACE": "/drone/src", "DRONE_BUILD_EVENT": event,
                "DRONE_PIPELINE_NAME": pipeline["name"], **(runner_env or {})}
    run = PipelineRun()
    try:
        _clone(docker, workspace.name, pipeline["steps"][0]["image"], clone_from)
        for step in step_order(pipeline["steps"]):
            env = environment(pipeline, step, secrets or {}, {**builtins, "DRONE_STEP_NAME": step["name"]})
            mounts = _mounts(docker, pipeline, step, workspace.name, temps, host_paths or {})
            result = _run_step(docker, step, env, mounts)
            run.steps.append(result)
            if result.exit_code != 0:
                break
    finally:
        for name in [workspace.name, *temps.values()]:
            docker.volumes.get(name).remove(force=True)
    return run


def _clone(docker, volume: str, image: str, source: Path) -> None:
    holder = docker.containers.create(image, ["true"], volumes={volume: {"bind": "/drone", "mode": "rw"}}, labels=LABEL)
    try:
        holder.put_archive("/drone", _workspace_tar(source))
    finally:
        holder.remove(force=True)


def _mounts(docker, pipeline: dict, step: dict, workspace: str, temps: dict[str, str],
            host_paths: dict[str, Path]) -> dict[str, dict]:
    mounts = {workspace: {"bind": "/drone", "mode": "rw"}}
    declared = {v["name"]: v for v in pipeline.get("volumes") or []}
    for wanted in step.get("volumes") or []:
        volume = declared[wanted["name"]]
        if "host" in volume:
            host = str(host_paths.get(volume["host"]["path"], volume["host"]["path"]))
            mounts[host] = {"bind": wanted["path"], "mode": "rw"}
        else:
            if wanted["name"] not in temps:
                temps[wanted["name"]] = docker.volumes.create(labels=LABEL).name
            mounts[temps[wanted["name"]]] = {"bind": wanted["path"], "mode": "rw"}
    return mounts


def _run_step(docker, step: dict, env: dict[str, str], mounts: dict[str, dict]) -> StepResult:
    if step.get("pull") != "never":
        raise ValueError(f"step {step['name']}: the stand-in never pulls; declare `pull: never`")
    docker.images.get(step["image"])  # present locally, or ImageNotFound
    encoded = base64.b64encode(env["DRONE_SCRIPT"].encode()).decode()
    container = docker.containers.create(
        step["image"], ["echo $DRONE_SCRIPT | base64 -d | /bin/sh -e"], entrypoint=["/bin/sh", "-c"],
        environment={**env, "DRONE_SCRIPT": encoded}, volumes=mounts, working_dir="/drone/src", labels=LABEL,
        network_mode="host")
    try:
        container.start()
        exit_code = container.wait(timeout=3600)["StatusCode"]
        logs = container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)
    return StepResult(step["name"], exit_code, logs, {k: v for k, v in env.items() if k != "DRONE_SCRIPT"})
