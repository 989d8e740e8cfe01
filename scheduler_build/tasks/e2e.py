"""e2e: the end-to-end tests on a real control plane (pytest -m e2e)."""

import os
import subprocess
import sys

from invoke import Collection, task
from invoke.exceptions import Exit

from .. import e2e as e2e_mod
from ..progress import log
from ._common import user_errors

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@task(default=True, help={
    "k": "only e2e tests matching this pytest -k expression, e.g. side_by_side",
    "verbose": "pytest -v",
    "exitfirst": "stop at the first failure (pytest -x)",
    "junit": "also write a JUnit XML report to this file",
})
@user_errors
def e2e(c, k=None, verbose=False, exitfirst=False, junit=None):
    """Run the end-to-end tests: our builds of kube-apiserver and kube-scheduler against real etcd."""
    argv = e2e_mod.pytest_argv(sys.executable, k=k, verbose=verbose, exitfirst=exitfirst, junit=junit)
    log("+ " + " ".join(argv[1:]))
    code = subprocess.call(argv, cwd=REPO)
    if code != 0:
        raise Exit(code=code)


ns = Collection("e2e", e2e)
