"""Shared task plumbing, the one pattern every collection follows.

- `option(c, key, flag, spec)` (inputs/common.py): every value, decided by the one precedence rule
  (flag > spec > environment > settings file > default, precedence.py) and typed.
- `describe(key)` (settings.describe): "default: key = value" for help texts.
- `emit` / `emit_json`: results on stdout, one write; logs go to stderr; `user_errors`: a UserError is one
  line on stderr and its exit code, no traceback (scheduler_build/cli/task_api.py, the seam bench/ uses too).
- `load_spec(c, ...)`: the one spec load of a task (--spec, else spec.path unless a plain build is asked for).
- `build_request(c, ...)` (inputs/build.py): the one home of "a BuildRequest from settings": every
  task that builds (build, image.build's missing platforms, dev.run, the cluster's components).
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from invoke import Argument, Task
from invoke.exceptions import Exit

from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.inputs.build import build_request
from scheduler_build.inputs.common import OFF, load_spec, option
from scheduler_build.errors import UserError
from scheduler_build.settings import describe, flag_help
from scheduler_build.cli.task_api import emit, emit_json, user_errors

__all__ = ["option", "describe", "flag_help", "emit", "emit_json", "user_errors", "negated", "add_inverse_flags", "OFF",
           "load_spec", "build_request"]


def negated(flag: Any) -> Any:
    """A negative flag (`--no-pull`) as the value of its positive setting (builder.pull) for option()."""
    return OFF if flag is True else (True if flag is OFF else None)


def _inverse(name: str) -> str | None:
    """The inverse of a boolean flag that a boolean setting stands behind: force -> no_force, no_wait -> wait."""
    names = {key.rsplit(".", 1)[1] for key, value in settings.leaves() if isinstance(value, bool)} | {"no_pull"}
    if name not in names:
        return None
    return name[3:] if name.startswith("no_") else f"no_{name}"


def add_inverse_flags(task: Task) -> None:
    """Give every boolean flag with a boolean setting behind it its inverse (`--no-force`, `--wait`),
    so the command line can turn off what a settings file turns on. The task sees OFF for the inverse."""
    if getattr(task, "_inverse_flags", False):  # tasks are module-level: namespace() may run twice
        return
    task._inverse_flags = True  # type: ignore[attr-defined]
    # From the signature: get_arguments() consumes the task's help texts (invoke pops them).
    pairs = {inv: name for name, param in inspect.signature(task.body).parameters.items()
             if param.default is False and (inv := _inverse(name))}
    if not pairs:
        return
    original_arguments, body = task.get_arguments, task.body

    def get_arguments(ignore_unknown_help: bool | None = None) -> list[Argument]:
        extra = [Argument(name=inv, kind=bool, default=False, help=f"turn --{flag.replace('_', '-')} off, "
                          "whatever the settings say") for inv, flag in pairs.items()]
        return original_arguments(ignore_unknown_help) + extra

    @functools.wraps(body)
    def with_inverses(*args: Any, **kwargs: Any) -> Any:
        for inv, flag in pairs.items():
            if kwargs.pop(inv, False):
                if kwargs.get(flag):
                    print(f"error: --{flag.replace('_', '-')} and --{inv.replace('_', '-')} contradict each other; "
                          "give one", file=sys.stderr, flush=True)
                    raise Exit(code=2)
                kwargs[flag] = OFF
        return body(*args, **kwargs)

    task.get_arguments = get_arguments  # type: ignore[method-assign]
    task.body = with_inverses


def accept_spec_on_stdin(task: Task) -> None:
    """`--spec -`: the spec is read from standard input, as kubectl reads `-f -`: once, into memory
    (spec/load.py), named `<stdin>` in messages; its relative paths (e.g. `./plugins/x`) mean what they
    would in a file in the working directory. Nothing is written: a read-only checkout works."""
    if "spec" not in inspect.signature(task.body).parameters or getattr(task, "_spec_stdin", False):
        return
    task._spec_stdin = True  # type: ignore[attr-defined]
    body = task.body

    @functools.wraps(body)
    def with_stdin(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("spec") == "-":
            try:
                spec_mod.stdin_text()  # read now: a task may load the spec after it has started work
            except UserError as exc:
                print(f"error: {exc}", file=sys.stderr, flush=True)
                raise Exit(code=exc.exit_code) from None
            kwargs["spec"] = spec_mod.STDIN_NAME  # the name every message gives it
        return body(*args, **kwargs)

    task.body = with_stdin
