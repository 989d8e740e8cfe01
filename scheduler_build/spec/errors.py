"""SpecError: every problem of a spec file in one report, each with its field path."""

from __future__ import annotations

from scheduler_build.errors import UserError

SPEC_HINT = "`inv init DIR` writes a commented starter spec to begin from"


class SpecError(UserError):
    """The spec file is unreadable or has one or more invalid fields (all listed)."""

    def __init__(self, source: str, errors: list[tuple[str, str]], hint: str | None = SPEC_HINT):
        self.source = source
        self.errors = list(errors)
        if len(self.errors) == 1:
            where, what = self.errors[0]
            message = f"{source}: {where + ': ' if where else ''}{what}"
        else:
            lines = [f"{source}: {len(self.errors)} errors in the build spec:"]
            lines += [f"  {where + ': ' if where else ''}{what}" for where, what in self.errors]
            message = "\n".join(lines)
        super().__init__(message, hint)

    @property
    def paths(self) -> list[str]:
        """The field paths at fault, in report order (tests key on these)."""
        return [where for where, _ in self.errors]

    def __str__(self) -> str:
        # The hint goes on its own line: the message may already span several.
        return f"{self.message}\n  hint: {self.hint}" if self.hint and "\n" in self.message else super().__str__()
