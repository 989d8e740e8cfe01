"""SOURCE_DATE_EPOCH: the one clock of reproducible outputs (binaries, layers, SBOMs)."""

from __future__ import annotations

import datetime as dt
import os

from scheduler_build.errors import UserError

HINT = "e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)"


def parse(text: str | int, origin: str = "SOURCE_DATE_EPOCH") -> int:
    """A count of seconds since 1970 (an int, or its decimal text); one clear error otherwise."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise UserError(f"{origin} must be an integer count of seconds, got {str(text)!r}", HINT) from None
    if value < 0:
        raise UserError(f"{origin} must not be negative, got {value}", HINT)
    return value


def from_environment(explicit: str | int | None = None, origin: str = "--source-date-epoch") -> int | None:
    """The explicit flag, else $SOURCE_DATE_EPOCH, else None (the caller's fallback applies)."""
    if explicit not in (None, ""):
        return parse(explicit, origin)
    env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return parse(env) if env else None


def utc_stamp(epoch: int) -> str:
    """RFC 3339 UTC with a Z, to the second: what image configs, SBOMs and version stamps carry."""
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
