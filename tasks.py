"""The repository's invoke entry point: the product's collections plus developer tasks.

`scheduler-build` (the console script of the installed package) serves the product's
tasks only; the tasks below need this checkout (its tests and benchmarks), so they
are composed here, the way invoke's own tasks.py composes its collections.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from invoke import Collection, task
from invoke.exceptions import Exit

import invoke.main

from bench.commands import ns as bench_ns
from scheduler_build.cli import add_suggestions
from scheduler_build.progress import log
from scheduler_build.commands import namespace
from scheduler_build.commands._common import user_errors
from tests.support.harness import pytest_argv

REPO = Path(__file__).resolve().parent


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
})
def test(c, fast=False, k=None, marker=None, verbose=False):
    """Run the test suite: unit, integration and e2e (all of them unless --fast)."""
    argv = [sys.executable, "-m", "pytest"]
    if fast:
        argv += ["-m", "not integration and not e2e and not node"]
    elif marker:
        argv += ["-m", marker]
    if k:
        argv += ["-k", k]
    if verbose:
        argv.append("-v")
    _pytest(argv)


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
ns.add_collection(Collection("e2e", e2e))
ns.add_collection(bench_ns)
