"""The repository's invoke entry point: the product's collections plus developer tasks.

`scheduler-build` (the console script of the installed package) serves the product's
tasks only; the tasks below need this checkout (its tests and benchmarks), so they
are composed here, the way invoke's own tasks.py composes its collections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from invoke import Collection, task
from invoke.exceptions import Exit

import invoke.main

from bench.commands import ns as bench_ns
from scheduler_build import settings, signals
from scheduler_build.atomic import write_atomic
from scheduler_build.cli.app import add_suggestions
from scheduler_build.progress import log
from scheduler_build.resolve import version_table
from scheduler_build.commands import namespace
from scheduler_build.cli.task_api import user_errors
from testkit import pythons as supported_pythons
from testkit import versions as test_versions
from testkit import warmup
from testkit.beside import Beside
from testkit.tier_records import records_args
from testkit.e2e import pytest_argv

REPO = Path(__file__).resolve().parent
signals.install()  # `inv`: SIGTERM and SIGHUP take Ctrl-C's path, as under scheduler-build (entry.py)
UNIT = "not integration and not e2e and not node"
LAST = "remote_engine or pipelines"  # through a second engine, or whole CI pipelines: the slowest, run last
# A full run's tiers, in order, each its own pytest run (so the e2e control plane is down before
# the node tier): the cheapest and broadest first, so a unit failure is known in minutes.
TIERS = [
    ("unit", UNIT),
    ("integration", f"integration and not e2e and not node and not ({LAST})"),
    ("e2e", f"e2e and not node and not ({LAST})"),
    ("node", "node"),  # a real node of its own; no other control plane beside it
    ("remote-engine-and-pipelines", f"({LAST}) and not node"),
    ("unit-pythons", UNIT),  # again on the oldest and newest supported Python
]
NO_TESTS = 5  # pytest's exit code when a selection is empty (e.g. no node tests on this machine)
# A tier started when another one starts, and collected at its own turn (testkit/beside.py): the e2e tier
# waits on its control planes most of the time, the integration tier keeps both cores compiling; the node
# and remote-engine tiers leave most of one core idle (waiting on pods, kubelets and a second engine), which
# the other Pythons' unit runs fill, one at a time, at the lowest priority.
STARTED_WITH = {"integration": "e2e", "node": "unit-pythons"}
LOW_PRIORITY = {"unit-pythons"}


def _pytest(argv: list[str]) -> None:
    log("+ " + " ".join(argv[1:]))
    code = subprocess.call(argv, cwd=REPO)
    if code != 0:
        raise Exit(code=code)


@task(help={
    "fast": "unit tests only (no docker, go, registry or control plane)",
    "k": "only tests matching this pytest -k expression",
    "marker": "only tests with this pytest marker expression, e.g. integration",
    "verbose": "pytest -v",
    "pythons": "also run the unit tests on the oldest and newest supported Python (always on a full run)",
    "keep-going": "a full run: run every tier even after one failed (it still fails at the end)",
    "canary": "instead: build what the Go module proxy serves now (not tests/versions.yaml) and say what is new",
})
def test(c, fast=False, k=None, marker=None, verbose=False, pythons=False, keep_going=False, canary=False):
    """Run the test suite: tier by tier (unit, unit on other Pythons, integration, e2e, node, remote engine and
    pipelines), stopping at the first failing tier; --fast, -k or --marker: one pytest run of that selection."""
    if canary:
        return _canary(k, verbose)
    if fast or k or marker:
        argv = [sys.executable, "-m", "pytest", "-m", UNIT if fast else marker] if (fast or marker) else \
            [sys.executable, "-m", "pytest"]
        _pytest(argv + (["-k", k] if k else []) + (["-v"] if verbose else []))
        if pythons:
            _unit_tests_on_each_end(records(), verbose)
        return
    out = records()
    early = Beside(REPO, log)
    try:
        with warmup.running(out / "warmup.log"):  # the later tiers' tools, built on the core the unit tiers leave idle
            run_tiers([name for name, _ in TIERS], lambda name, out: _tier(name, out, verbose, early), out, keep_going)
    finally:
        early.stop_all()  # a tier started early whose turn never came (a failing tier, Ctrl-C)


def records() -> Path:
    """This run's directory of JUnit XML and durations, one pair per tier, under the cache."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = settings.cache_dir() / "test-runs" / stamp
    out.mkdir(parents=True, exist_ok=True)
    return out


def run_tiers(names: list[str], run_one, out: Path, keep_going: bool = False) -> list[str]:
    """Run each tier by `run_one(name, out)` (its exit code) in order; stop at the first failure unless
    `keep_going`; write out/summary.json (seconds and exit code per tier). Raises Exit when one failed."""
    summary: list[dict] = []
    failed: list[str] = []
    for name in names:
        started, cpu = time.monotonic(), _proc_stat()
        code = run_one(name, out)
        code = 0 if code == NO_TESTS else code
        busy = cpu_busy(cpu, _proc_stat())
        summary.append({"tier": name, "seconds": round(time.monotonic() - started, 1), "exit_code": code,
                        **({"cpu_busy": busy} if busy is not None else {})})
        write_atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
        log(f"tier {name}: {'passed' if code == 0 else f'FAILED (exit {code})'} in {summary[-1]['seconds']:.0f} s"
            + (f" (the machine's CPUs {busy:.0%} busy)" if busy is not None else ""))
        if code != 0:
            failed.append(name)
            if not keep_going:
                break
    log(f"per-tier JUnit XML, durations and summary.json: {out}")
    if failed:
        skipped = names[names.index(failed[-1]) + 1:] if not keep_going else []
        raise Exit(f"error: tier(s) {', '.join(failed)} failed" +
                   (f"; not run: {', '.join(skipped)} (--keep-going runs them)" if skipped else ""), code=1)
    return [s["tier"] for s in summary]


def _proc_stat() -> str:
    try:
        return Path("/proc/stat").read_text()
    except OSError:
        return ""


def cpu_busy(before: str, after: str) -> float | None:
    """The share of all CPUs' time that was busy between two readings of /proc/stat (1.0: every core
    busy the whole time), from its first line: user nice system idle iowait irq softirq steal. None
    without readings. It says how much of a tier's wall clock a second core could still have used."""
    def times(text: str) -> list[int]:
        fields = text.split("\n", 1)[0].split()
        return [int(x) for x in fields[1:9]] if fields[:1] == ["cpu"] else []

    a, b = times(before), times(after)
    if len(a) < 5 or len(b) != len(a):
        return None
    delta = [y - x for x, y in zip(a, b)]
    total = sum(delta)
    return round(1 - (delta[3] + delta[4]) / total, 2) if total > 0 else None


def _tier(name: str, out: Path, verbose: bool, early: Beside | None = None) -> int:
    if early is not None and early.started(name):
        return early.finish(name)
    if name == "unit-pythons":
        return _unit_tests_on_each_end(out, verbose)
    if early is not None and name in STARTED_WITH:
        other = STARTED_WITH[name]
        early.start(other, _tier_argv(other, out, verbose), out, low_priority=other in LOW_PRIORITY)
    argv = _tier_argv(name, out, verbose)
    log(f"+ tier {name}: " + " ".join(argv[1:]))
    return subprocess.call(argv, cwd=REPO)


def _tier_argv(name: str, out: Path, verbose: bool) -> list[str]:
    if name == "unit-pythons":  # one run after the other: beside another tier, one core is what is left
        return [sys.executable, "-m", "testkit.pythons", str(out), UNIT, "--one-at-a-time",
                *(["--verbose"] if verbose else [])]
    return [sys.executable, "-m", "pytest", "-m", dict(TIERS)[name], *records_args(out, name),
            *(["-v"] if verbose else [])]


CANARY_TESTS = ["tests/integration/test_served_minors.py", "tests/integration/test_retarget_minors.py"]


def _canary(k=None, verbose=False) -> None:
    """What is new on the proxy compared with tests/versions.yaml (stdout), then the newest served minor and
    patch built, and the served-minor tests run on the live versions: a failure here is tomorrow's bump."""
    pinned = test_versions.load()
    now = test_versions.live(pinned.default_minor)
    new = test_versions.changes(pinned, now)
    print("\n".join(new) if new else f"nothing new: the proxy serves what {test_versions.PINNED.name} pins")
    env = dict(os.environ, **{test_versions.CANARY_ENV: "1"})
    failed = []
    for version in dict.fromkeys([now.newest, now.default]):
        argv = [sys.executable, "-m", "invoke", "build", "--no-spec", "--k8s-version", version, "--no-pull", "--json"]
        log("+ canary: inv " + " ".join(argv[3:]))
        if subprocess.call(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL) != 0:
            failed.append(f"inv build --k8s-version {version}")
    argv = [sys.executable, "-m", "pytest", *CANARY_TESTS, *(["-k", k] if k else []), *(["-v"] if verbose else [])]
    log("+ canary: " + " ".join(argv[1:]))
    if subprocess.call(argv, cwd=REPO, env=env) != 0:
        failed.append("the served-minor tests")
    if failed:
        raise Exit(f"canary: {', '.join(failed)} failed on the proxy's versions; new: {'; '.join(new) or 'nothing'}",
                   code=1)
    log("canary: the newest served versions build" + ("; bump when ready: inv bump-test-versions" if new else ""))


@task
def bump_test_versions(c):
    """Rewrite tests/versions.yaml (and docs/build.md's version table) from the Go module proxy and say what changed."""
    pinned = test_versions.load()
    try:
        now = test_versions.live(pinned.default_minor)
    except ValueError as exc:
        raise Exit(f"error: {exc}", code=2) from None
    new = test_versions.changes(pinned, now)
    write_atomic(test_versions.PINNED, test_versions.dump(now))
    # docs/build.md's table of served minors is checked against the pinned listings: it moves with them
    table = REPO / "docs" / "build.md"
    version_table.update(table, version_table.markdown(version_table.rows(settings.cache_dir())))
    print("\n".join(new) if new else "nothing new: tests/versions.yaml already pins what the proxy serves")


def _unit_tests_on_each_end(out: Path, verbose: bool = False) -> int:
    """The unit tests again on the oldest and the newest supported Python (testkit/pythons.py), at once."""
    return supported_pythons.on_each_end(out, UNIT, verbose, settings.cache_dir(), log)


@task(default=True, help={
    "k": "only e2e tests matching this pytest -k expression, e.g. side_by_side",
    "verbose": "pytest -v",
    "exitfirst": "stop at the first failure (pytest -x)",
    "junit": "also write a JUnit XML report to this file",
})
@user_errors
def e2e(c, k=None, verbose=False, exitfirst=False, junit=None):
    """Run the end-to-end tests: our builds of kube-apiserver and kube-scheduler against real etcd."""
    _pytest(pytest_argv(sys.executable, k=k, verbose=verbose, exitfirst=exitfirst, junit=junit))


# `inv clen` / `inv clean --dryrun`: one line with a "did you mean", exit 2 (invoke.main.program runs `inv`).
add_suggestions(invoke.main.program)

ns = namespace()
ns.add_task(test)
ns.add_task(bump_test_versions)
ns.add_collection(Collection("e2e", e2e))
ns.add_collection(bench_ns)
