"""A STAND-IN for Drone's docker runner (drone-runner-docker), for tests.

The Go module proxy refuses every Drone runner module, so this does, with the real
Docker engine, what that runner does with a `type: docker` pipeline:

- one workspace volume per pipeline, mounted at /drone/src in every step (the working
  directory); the clone step fills it (here: the test's clone, copied in through the
  engine's archive API, as drone/git cannot be pulled);
- the pipeline's `trigger` (event, ref, branch; include/exclude): a pipeline it does not
  match runs no step;
- one container per step, from the step's image (`pull: never`: it must be local).
  When no step declares `depends_on` the steps run one after another in file order;
  otherwise as a graph: every step whose dependencies have finished starts at once, so
  independent steps run concurrently, as the runner does. A step's `when` (event, ref,
  branch, status) skips it; a skipped step counts as finished for its dependents. After
  a failure no further step starts unless its `when.status` includes failure;
- each step's `commands` as one script run by `/bin/sh -e` after `echo + <command>`,
  passed in DRONE_SCRIPT like the runner does;
- environment: Drone's built-in DRONE_* variables, the runner's global environment
  (DRONE_RUNNER_ENVIRON), the pipeline's `environment`, then the step's; `from_secret`
  values come from the secrets given, and only into the steps that declare them. The
  environment a result reports is read from inside the step's container (`env` at the
  start of its script), not from the YAML;
- volumes: a step's `volumes` bind the pipeline volume of that name (`host.path`, e.g.
  the engine's socket) or a `temp` volume at the step's `path`.

Not done (unused by ci/drone.yml): services, plugins' `settings`, `when`/`trigger` on
cron, target, repo or instance.
Different: the runner puts a pipeline's steps on a network of their own; this machine's
engine has no bridge networking, so the steps share the host's network.
"""

from __future__ import annotations

import base64
import fnmatch
import io
import tarfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from testkit.docker_sdk import client

LABEL = {"org.scheduler-build.test": "drone-docker-standin"}
ENV_FILE = "/tmp/drone-step.env"
_TEMPS_LOCK = threading.Lock()  # the step's environment, as its script saw it


@dataclass
class StepResult:
    name: str
    exit_code: int
    logs: str
    environment: dict[str, str]
    started: float = 0.0  # time.monotonic() at start and end, to tell what ran concurrently
    ended: float = 0.0


@dataclass
class PipelineRun:
    steps: list[StepResult] = field(default_factory=list)  # in the order they finished
    skipped: list[str] = field(default_factory=list)  # by `when`, or not started after a failure
    triggered: bool = True

    @property
    def ok(self) -> bool:
        return all(s.exit_code == 0 for s in self.steps)

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)

    def overlapped(self, a: str, b: str) -> bool:
        first, second = self.step(a), self.step(b)
        return first.started < second.ended and second.started < first.ended


@dataclass
class Build:
    """What a pipeline is run for: Drone's event, ref and branch."""
    event: str = "pull_request"
    ref: str = "refs/heads/main"
    branch: str = "main"


def _condition(spec, value: str) -> bool:
    """One Drone condition: a list (include) or {include, exclude}, with glob patterns."""
    if spec is None:
        return True
    if isinstance(spec, (str, list)):
        spec = {"include": spec}
    include, exclude = spec.get("include"), spec.get("exclude")
    include = [include] if isinstance(include, str) else include
    exclude = [exclude] if isinstance(exclude, str) else exclude
    if include and not any(fnmatch.fnmatchcase(value, p) for p in include):
        return False
    return not (exclude and any(fnmatch.fnmatchcase(value, p) for p in exclude))


def matches(conditions: dict | None, build: Build, status: str = "success") -> bool:
    """Whether a `trigger` or `when` block admits this build (and, for `when`, the pipeline's status)."""
    conditions = conditions or {}
    return (_condition(conditions.get("event"), build.event) and _condition(conditions.get("ref"), build.ref)
            and _condition(conditions.get("branch"), build.branch)
            and _condition(conditions.get("status", ["success"]), status))


def schedule(steps: list[dict], run_step: Callable[[dict], StepResult], build: Build) -> PipelineRun:
    """Run `steps` as Drone's docker runner orders them (see the module's docstring)."""
    names = [s["name"] for s in steps]
    for step in steps:
        unknown = [d for d in step.get("depends_on", []) if d not in names]
        if unknown:
            raise ValueError(f"step {step['name']}: depends_on unknown step(s) {unknown}")
    graph = any("depends_on" in s for s in steps)
    run = PipelineRun()
    finished: set[str] = set()
    pending = list(steps)
    with ThreadPoolExecutor(max_workers=max(1, len(steps))) as pool:
        running: dict = {}
        while pending or running:
            status = "success" if run.ok else "failure"
            ready = [s for s in pending if all(d in finished for d in s.get("depends_on", []))]
            if not graph:
                ready = ready[:1] if not running else []
            for step in ready:
                pending.remove(step)
                if not matches(step.get("when"), build, status):
                    run.skipped.append(step["name"])
                    finished.add(step["name"])
                    continue
                running[pool.submit(run_step, step)] = step
            if not running:
                if pending and not any(all(d in finished for d in s.get("depends_on", [])) for s in pending):
                    raise ValueError(f"depends_on cycle among {[s['name'] for s in pending]}")
                continue
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                step = running.pop(future)
                run.steps.append(future.result())
                finished.add(step["name"])
    return run


def script(commands: list[str]) -> str:
    lines = ["set -e", f"env -0 > {ENV_FILE}"]
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
                 runner_env: dict[str, str] | None = None, event: str = "pull_request", ref: str = "",
                 host_paths: dict[str, Path] | None = None) -> PipelineRun:
    """Run one `type: docker` pipeline document; every container and volume it made is removed.

    `host_paths` maps a host volume's path to the directory that plays it on this machine."""
    assert pipeline["kind"] == "pipeline" and pipeline["type"] == "docker", pipeline.get("type")
    build = Build(event=event, ref=ref or ("refs/tags/v0.0.0" if event == "tag" else "refs/heads/main"))
    if not matches(pipeline.get("trigger"), build):
        return PipelineRun(triggered=False)
    docker = client()
    workspace = docker.volumes.create(labels=LABEL)
    temps: dict[str, str] = {}
    builtins = {"CI": "true", "DRONE": "true", "DRONE_WORKSPACE": "/drone/src", "DRONE_BUILD_EVENT": build.event,
                "DRONE_COMMIT_REF": build.ref, "DRONE_PIPELINE_NAME": pipeline["name"], **(runner_env or {})}

    def run_step(step: dict) -> StepResult:
        env = environment(pipeline, step, secrets or {}, {**builtins, "DRONE_STEP_NAME": step["name"]})
        return _run_step(docker, step, env, _mounts(docker, pipeline, step, workspace.name, temps, host_paths or {}))

    try:
        _clone(docker, workspace.name, pipeline["steps"][0]["image"], clone_from)
        return schedule(pipeline["steps"], run_step, build)
    finally:
        for name in [workspace.name, *temps.values()]:
            docker.volumes.get(name).remove(force=True)


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
            with _TEMPS_LOCK:
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
    started = time.monotonic()
    try:
        container.start()
        exit_code = container.wait(timeout=3600)["StatusCode"]
        ended = time.monotonic()
        logs = container.logs().decode(errors="replace")
        seen = _read_environment(container)
    finally:
        container.remove(force=True)
    return StepResult(step["name"], exit_code, logs, seen, started, ended)


def _read_environment(container) -> dict[str, str]:
    """The variables the step's script saw, from the file it wrote inside its container."""
    try:
        stream, _ = container.get_archive(ENV_FILE)
    except Exception:  # the script never started (e.g. no shell): nothing was seen
        return {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        text = tar.extractfile(tar.getmembers()[0]).read().decode(errors="replace")
    return parse_env(text)


def parse_env(text: str) -> dict[str, str]:
    """`env -0` output: NUL-separated NAME=value (values may span lines, e.g. a PEM secret)."""
    seen = dict(entry.split("=", 1) for entry in text.split("\0") if "=" in entry)
    seen.pop("DRONE_SCRIPT", None)
    return seen
