"""The public seam for tasks outside the product's task layer (the checkout's bench/ and tasks.py): how a
task reports (`emit`, `emit_json`, `user_errors`), decides a value (`option`, the one precedence rule) and
documents a flag (`flag_help`, `describe`, from the settings table). The product's tasks use the same
functions through commands/_common.py, so a benchmark task behaves like a product task.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable

from invoke.exceptions import Exit

from scheduler_build import signals
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import option
from scheduler_build.settings import describe, flag_help

__all__ = ["emit", "emit_json", "user_errors", "option", "describe", "flag_help"]


def user_errors(func: Callable) -> Callable:
    """Turn UserError into `error: ...` on stderr and a non-zero exit, no traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            raise Exit(code=exc.exit_code) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, and SIGTERM/SIGHUP (signals.py): the same clean-up ran
            raise Exit(code=signals.report(exc)) from None

    return wrapper


def emit(text: str) -> None:
    """Machine-readable results go to stdout, one write."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def emit_json(data: Any, sort_keys: bool = True) -> None:
    """A result as JSON on stdout (indented, keys sorted unless their order means something), one write."""
    emit(json.dumps(data, indent=2, sort_keys=sort_keys))
