"""User-facing errors: a message naming what is at fault and a hint to fix it.

Tasks turn these into a one-line message on stderr and a non-zero exit, with no
traceback; anything else escaping a task is a bug and keeps its traceback.
"""

from __future__ import annotations

import re


# The program the user runs: "inv" in a checkout, "scheduler-build" (set by its Program) for pip users.
PROGRAM = ["inv"]


# `inv TASK`, quoted or not: the word inv before a task name (never inside a word, a path or a flag).
_INV_TASK = re.compile(r"(?<![\w./-])inv (?=[a-z-])")


def name_program(text: str, program: str) -> str:
    """Text written with `inv TASK ...` (or bare inv TASK ...) naming `program TASK ...` instead."""
    return text if program == "inv" else _INV_TASK.sub(f"{program} ", text)


def for_program(text: str) -> str:
    """A hint written as `inv TASK ...`, for the program actually running (`scheduler-build TASK ...`)."""
    return name_program(text, PROGRAM[0])


class UserError(Exception):
    """Bad input or a missing prerequisite that the user can fix."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return for_program(f"{self.message}; {self.hint}")
        return for_program(self.message)


class WriteError(UserError):
    """A file could not be written (a read-only, full or missing directory): the fault is the place, not the input."""


class BuildFailed(UserError):
    """A compile or verification step failed; its own output was already streamed."""

    exit_code = 1
