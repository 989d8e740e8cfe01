"""The repository's invoke entry point: the product's collections plus developer tasks.

`scheduler-build` (the console script of the installed package) serves the product's
tasks only; the tasks below need this checkout (its tests and benchmarks), so they
are composed here, the way invoke's own tasks.py composes its collections.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from invoke import Collection, task
from invoke.exceptions import Exit

import invoke.main

from bench.commands import ns as bench_ns
from scheduler_build import settings, signals
from scheduler_build.atomic import write_atomic
from scheduler_build.cli import add_suggestions
from scheduler_build.progress import log
from scheduler_build.resolve import version_table
from scheduler_build.commands import namespace
from scheduler_build.commands._common import user_errors
from testkit import pythons as supported_pythons
from testkit import versions as test_versions
from testkit.e2e import pytest_argv

REPO = Path(__file__).resolve().parent
signals.install()  # `inv`: SIGTERM and SIGHUP take Ctrl-C's path, as under scheduler-build (entry.py)
UNIT = "not integration and not e2e and not node"


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
    "canary": "instead: build what the Go module proxy serves now (not tests/versions.yaml) and say what is new",
})
def test(c, fast=False, k=None, marker=None, verbose=False, pythons=False, canary=False):
    """Run the test suite: unit, integration and e2e (all of them unless --fast)."""
    if canary:
        return _canary(k, verbose)
    argv = [sys.executable, "-m", "pytest"]
    if fast:
        argv += ["-m", UNIT]
    elif marker:
        argv += ["-m", marker]
    if k:
        argv += ["-k", k]
    if verbose:
        argv.append("-v")
    _pytest(argv)
    if pythons or not (fast or k or marker):
        _unit_tests_on_each_end()


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


def _unit_tests_on_each_end() -> None:
    """The unit tests again on the oldest and the newest supported Python (testkit/pythons.py)."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    for minor in [m for m in supported_pythons.ends() if m != running]:  # the running one has just run them
        try:
            env_dir = supported_pythons.venv(minor, settings.cache_dir(), log)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            raise Exit(f"error: {exc}", code=2) from None
        env = dict(os.environ, PATH=f"{env_dir / 'bin'}:{os.environ.get('PATH', '')}")
        argv = [str(env_dir / "bin" / "python"), "-m", "pytest", "-q", "-m", UNIT]
        log(f"+ python {minor}: " + " ".join(argv[1:]))
        if subprocess.call(argv, cwd=REPO, env=env) != 0:
            raise Exit(code=1)


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
