"""Shared task plumbing: user errors become a clean message and exit code."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

from invoke.exceptions import Exit

from scheduler_build.errors import UserError


def user_errors(func: Callable) -> Callable:
    """Turn UserError into `error: ...` on stderr and a non-zero exit, no traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            raise Exit(code=exc.exit_code) from None
        except KeyboardInterrupt:
            print("interrupted: the previous good state is kept", file=sys.stderr, flush=True)
            raise Exit(code=130) from None

    return wrapper


def emit(text: str) -> None:
    """Machine-readable results go to stdout, one write."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
