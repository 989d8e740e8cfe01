"""The Drone docker stand-in's scheduling (testkit/drone_docker.py), with no engine: step
order, concurrency, `when`, `trigger`, failure, and reading a step's environment."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import yaml

from testkit.drone_docker import Build, StepResult, matches, parse_env, schedule

REPO = Path(__file__).resolve().parents[2]


def stub(fail: tuple[str, ...] = (), seconds: float = 0.15):
    lock = threading.Lock()
    calls: list[str] = []

    def run_step(step: dict) -> StepResult:
        started = time.monotonic()
        with lock:
            calls.append(step["name"])
        time.sleep(seconds)
        return StepResult(step["name"], 1 if step["name"] in fail else 0, "", {}, started, time.monotonic())

    return run_step, calls


GRAPH = [{"name": "a"}, {"name": "b", "depends_on": ["a"]}, {"name": "c", "depends_on": ["a"]},
         {"name": "d", "depends_on": ["b", "c"]}]


def test_independent_steps_run_concurrently_and_dependents_wait():
    run_step, _ = stub()
    run = schedule(GRAPH, run_step, Build())
    assert run.ok and run.overlapped("b", "c")
    assert run.step("a").ended <= min(run.step("b").started, run.step("c").started)
    assert run.step("d").started >= max(run.step("b").ended, run.step("c").ended)


def test_without_depends_on_steps_run_one_after_another():
    # Negative control of the concurrency check above: the same steps, no graph, never overlap.
    run_step, calls = stub()
    run = schedule([{"name": n} for n in "abc"], run_step, Build())
    assert calls == ["a", "b", "c"] and not run.overlapped("a", "b") and not run.overlapped("b", "c")


def test_a_failure_starts_nothing_more_but_failure_steps():
    run_step, calls = stub(fail=("a",))
    steps = GRAPH + [{"name": "notify", "depends_on": ["a"], "when": {"status": ["success", "failure"]}}]
    run = schedule(steps, run_step, Build())
    assert not run.ok and sorted(calls) == ["a", "notify"] and sorted(run.skipped) == ["b", "c", "d"]


def test_when_skips_a_step_and_its_dependents_still_run():
    run_step, calls = stub(seconds=0.01)
    steps = [{"name": "a"}, {"name": "tag-only", "depends_on": ["a"], "when": {"event": ["tag"]}},
             {"name": "after", "depends_on": ["tag-only"]}]
    run = schedule(steps, run_step, Build(event="pull_request"))
    assert calls == ["a", "after"] and run.skipped == ["tag-only"]
    run_step, calls = stub(seconds=0.01)
    schedule(steps, run_step, Build(event="tag", ref="refs/tags/v1.0.0"))
    assert calls == ["a", "tag-only", "after"]


def test_the_release_pipelines_trigger_only_on_version_tags():
    docs = {d["name"]: d for d in yaml.safe_load_all((REPO / "ci/drone.yml").read_text()) if d}
    trigger = docs["release-docker"]["trigger"]
    assert matches(trigger, Build(event="tag", ref="refs/tags/v1.2.3"))
    assert not matches(trigger, Build(event="tag", ref="refs/tags/nightly"))
    assert not matches(trigger, Build(event="pull_request", ref="refs/pull/1/head"))
    assert matches(docs["pull-request-docker"]["trigger"], Build(event="pull_request"))
    assert not matches({"event": {"exclude": ["tag"]}}, Build(event="tag"))


def test_the_environment_is_read_as_the_step_saw_it():
    pem = "-----BEGIN KEY-----\nAAA=\nB=C\n-----END KEY-----"
    seen = parse_env(f"A=1\0COSIGN_KEY={pem}\0DRONE_SCRIPT=xyz\0EMPTY=\0")
    assert seen == {"A": "1", "COSIGN_KEY": pem, "EMPTY": ""}
