"""SOURCE_DATE_EPOCH: the one clock of reproducible outputs (binaries, layers, SBOMs)."""

from __future__ import annotations

import datetime as dt

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


def chosen(decided: str | int | None, origin: str = "--source-date-epoch") -> int | None:
    """The decided value (inputs/common.source_date_epoch: the flag or setting, else $SOURCE_DATE_EPOCH), else
    None: the caller's fallback applies."""
    if decided in (None, ""):
        return None
    return parse(decided, origin)


def utc_stamp(epoch: int) -> str:
    """RFC 3339 UTC with a Z, to the second: what image configs, SBOMs and version stamps carry."""
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
