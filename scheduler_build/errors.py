"""User-facing errors: a message naming what is at fault and a hint to fix it.

Tasks turn these into a one-line message on stderr and a non-zero exit, with no
traceback; anything else escaping a task is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input or a missing prerequisite that the user can fix."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}; {self.hint}"
        return self.message


class BuildFailed(UserError):
    """A compile or verification step failed; its own output was already streamed."""

    exit_code = 1
