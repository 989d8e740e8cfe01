"""`scheduler-build`: the same tasks as `inv`, for pip users without a tasks.py.

`files` finds the settings files, `rewrite` turns invoke's errors into one line with a fix,
`program` is the Program itself; this module puts them together.
"""

from __future__ import annotations

import sys

from invoke import Collection

from scheduler_build import __version__
from scheduler_build.cli import listing as cli_listing
from scheduler_build.cli.files import FILE_NAMES, SchedulerBuildConfig, find_project
from scheduler_build.cli.program import SchedulerBuildProgram
from scheduler_build.cli.rewrite import add_suggestions, parse_error_line, reader_left

__all__ = ["FILE_NAMES", "SchedulerBuildConfig", "find_project", "add_suggestions", "parse_error_line", "program",
           "main"]


def _namespace() -> Collection:
    """The product's tasks, plus `help` and `version` (scheduler-build only; `inv` has --help/--version)."""
    from scheduler_build import commands  # the heavy part of start-up: only when a task, --list or completion needs it
    from scheduler_build.commands import meta

    ns = commands.namespace()
    ns.add_task(meta.help_task(program), name="help")
    ns.add_task(meta.version)
    cli_listing.save(ns)
    return ns


def _runnable(names: set[str]) -> Collection | None:
    """Only the tasks under these root names (e.g. {"build"}), each module imported alone; None when one of
    them is not a product module's (`help` and `version` need the program: `_namespace`)."""
    from scheduler_build import commands  # its task modules are imported by namespace(only=...), each alone

    if not names or not names <= set(commands.TASKS) | set(commands.COLLECTIONS):
        return None
    return commands.namespace(only=names)


program = SchedulerBuildProgram(namespace_factory=_namespace, runnable_factory=_runnable, name="scheduler-build",
                                binary="scheduler-build", version=__version__, config_class=SchedulerBuildConfig)
add_suggestions(program)


def main() -> None:
    try:
        program.run()
        sys.stdout.flush()
    except BrokenPipeError:
        reader_left()
