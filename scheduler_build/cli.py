"""`scheduler-build`: the same tasks as `inv`, for pip users without a tasks.py."""

from __future__ import annotations

import os
import sys

from invoke import Config, Program

from scheduler_build import __version__
from scheduler_build.tasks import namespace


class SchedulerBuildConfig(Config):
    """Reads invoke.yaml like `inv` does; environment variables use SCHEDULER_BUILD_."""

    prefix = "invoke"
    env_prefix = "SCHEDULER_BUILD"

    def __init__(self, *args, **kwargs):
        # With a built-in namespace invoke has no project location: use the cwd so a
        # project's invoke.yaml still applies.
        kwargs.setdefault("project_location", os.getcwd())
        super().__init__(*args, **kwargs)


program = Program(
    namespace=namespace(),
    name="scheduler-build",
    binary="scheduler-build",
    version=__version__,
    config_class=SchedulerBuildConfig,
)


def main() -> None:
    try:
        program.run()
        sys.stdout.flush()
    except BrokenPipeError:
        # `scheduler-build --list | head`: the reader left; say nothing, like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
