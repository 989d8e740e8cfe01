"""`inv doctor`: every prerequisite of a build, with its fix."""

import json as json_lib
import sys

from invoke import task
from invoke.exceptions import Exit

from scheduler_build import doctor as doctor_checks
from scheduler_build import settings
from scheduler_build.tasks._common import emit, user_errors


@task(help={
    "registry": "also check that this registry (HOST[:PORT]) answers (default: registry.url)",
    "json": "print the checks as JSON",
})
@user_errors
def doctor(c, registry=None, json=False):
    """Check every prerequisite of a build and say how to fix what is missing."""
    checks = doctor_checks.run_all(c.config, settings.get(c.config, "registry.url", registry))
    if json:
        emit(json_lib.dumps([check.__dict__ for check in checks], indent=2))
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("WARN" if not check.required else "FAIL")
            print(f"[{mark}] {check.name}: {check.detail}", file=sys.stderr if json else sys.stdout)
            if not check.ok and check.fix:
                print(f"       fix: {check.fix}")
    if any(not check.ok and check.required for check in checks):
        raise Exit("doctor: a build cannot run until the FAIL lines are fixed", code=1)
