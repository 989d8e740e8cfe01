"""Top-level tasks: doctor and test."""

import os
import subprocess
import sys

from invoke import task
from invoke.exceptions import Exit

from .. import doctor as doctor_checks
from .. import settings
from ._common import emit, user_errors


@task(help={
    "registry": "also check that this registry (HOST[:PORT]) answers (default: registry.url)",
    "json": "print the checks as JSON",
})
@user_errors
def doctor(c, registry=None, json=False):
    """Check every prerequisite of a build and say how to fix what is missing."""
    checks = doctor_checks.run_all(c.config, settings.get(c.config, "registry.url", registry))
    if json:
        import json as json_lib

        emit(json_lib.dumps([check.__dict__ for check in checks], indent=2))
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("WARN" if not check.required else "FAIL")
            print(f"[{mark}] {check.name}: {check.detail}", file=sys.stderr if json else sys.stdout)
            if not check.ok and check.fix:
                print(f"       fix: {check.fix}")
    if any(not check.ok and check.required for check in checks):
        raise Exit("doctor: a build cannot run until the FAIL lines are fixed", code=1)


@task(help={
    "fast": "unit tests only (no docker, go, registry or control plane)",
    "k": "only tests matching this pytest -k expression",
    "marker": "only tests with this pytest marker expression, e.g. integration",
    "verbose": "pytest -v",
})
def test(c, fast=False, k=None, marker=None, verbose=False):
    """Run the test suite: unit, integration and e2e (all of them unless --fast)."""
    args = [sys.executable, "-m", "pytest"]
    if fast:
        args += ["-m", "not integration and not e2e"]
    elif marker:
        args += ["-m", marker]
    if k:
        args += ["-k", k]
    if verbose:
        args.append("-v")
    code = subprocess.call(args, cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if code != 0:
        raise Exit(code=code)
