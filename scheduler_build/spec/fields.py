"""Field primitives: check one raw YAML value, record (path, message) when it is wrong.

Every primitive returns the value when it is valid and None otherwise, after
recording why, so a section checker carries on and the spec's author sees every
problem in one report. Messages name the expected form and show the bad value.
"""

from __future__ import annotations

import difflib
import re
import reprlib
from typing import Any, Callable

from scheduler_build.spec.formats import DNS1123_LABEL, DURATION, QUANTITY

Errors = list[tuple[str, str]]

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxdict, _SHORT.maxlist, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60


def show(value: Any) -> str:
    """The value as the message quotes it, cut short so one error stays one line.

    reprlib bounds the work too: a huge value (an expanded alias) is never repr()'d whole."""
    text = _SHORT.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def type_name(value: Any) -> str:
    """YAML's name for the value's type (a mapping, a list, ...), as the author wrote it."""
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def suggest(name: Any, known: set[str]) -> str:
    """' (did you mean 'X'?)' for the closest known name, or ''."""
    close = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_integer(value: Any) -> bool:
    """An int that is not a bool (YAML `true` is a bool, and bool is an int subclass)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_text(value: Any) -> Any:
    """Unquoted YAML numbers (version: 1, cpu: 0.5) as the text they stand for; anything else unchanged."""
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def seconds(duration: Any) -> float | None:
    """A Go duration string in seconds (None when absent or not parseable)."""
    if not isinstance(duration, str) or not DURATION.match(duration):
        return None
    if duration == "0":
        return 0.0
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(duration))


class Fields:
    """The primitives, over one shared list of errors (a whole spec's check shares one)."""

    def __init__(self) -> None:
        self.errors: Errors = []

    def err(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def mapping(self, path: str, value: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict | None:
        """A mapping with only `allowed` keys and every `required` one set (not null)."""
        if not isinstance(value, dict):
            self.err(path, f"must be a mapping, got {type_name(value)} {show(value)}")
            return None
        for key in value:
            if key not in allowed:
                self.err(f"{path}.{key}" if path else str(key),
                         f"unknown field{suggest(key, set(allowed))}; allowed: {', '.join(allowed)}")
        for key in required:
            if key not in value or value[key] is None:
                self.err(f"{path}.{key}" if path else key, "is required")
        return value

    def seq(self, path: str, value: Any) -> list | None:
        if not isinstance(value, list):
            self.err(path, f"must be a list, got {type_name(value)} {show(value)}")
            return None
        return value

    def string(self, path: str, value: Any, pattern: re.Pattern | None = None, what: str = "",
               choices: tuple[str, ...] = ()) -> str | None:
        """A string, one of `choices` when given, matching `pattern` (described as `what`) when given."""
        if not isinstance(value, str):
            self.err(path, f"must be a string, got {type_name(value)} {show(value)}")
            return None
        if choices and value not in choices:
            self.err(path, f"must be one of {', '.join(choices)}, got {show(value)}")
            return None
        if pattern is not None and not pattern.match(value):
            self.err(path, f"must be {what}, got {show(value)}")
            return None
        return value

    def enum(self, path: str, value: Any, choices: tuple[str, ...]) -> str | None:
        return self.string(path, value, choices=choices)

    def duration(self, path: str, value: Any, what: str = "a duration such as 5s") -> str | None:
        """A Go duration string (time.ParseDuration's syntax)."""
        return self.string(path, value, DURATION, what)

    def quantity(self, path: str, value: Any) -> str | None:
        """A Kubernetes resource quantity; an unquoted number counts as its text."""
        return self.string(path, as_text(value), QUANTITY, "a quantity such as 100m, 0.5 or 128Mi")

    def dns_label(self, path: str, value: Any) -> str | None:
        if isinstance(value, str) and len(value) > 63:
            self.err(path, f"must be at most 63 characters (a DNS-1123 label), got {len(value)}")
            return None
        return self.string(path, value, DNS1123_LABEL,
                           "a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric)")

    def integer(self, path: str, value: Any, lo: int | None = None, hi: int | None = None) -> int | None:
        """An integer within [lo, hi] (each bound optional); YAML `true` is not a number here."""
        if not is_integer(value):
            self.err(path, f"must be an integer, got {type_name(value)} {show(value)}")
            return None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"between {lo} and {hi}" if lo is not None and hi is not None else (
                f">= {lo}" if lo is not None else f"<= {hi}")
            self.err(path, f"must be {bounds}, got {value}")
            return None
        return value

    def number(self, path: str, value: Any, lo: float | None = None) -> float | None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.err(path, f"must be a number, got {type_name(value)} {show(value)}")
            return None
        if lo is not None and value < lo:
            self.err(path, f"must be >= {lo}, got {value}")
            return None
        return value

    def boolean(self, path: str, value: Any) -> bool | None:
        if not isinstance(value, bool):
            self.err(path, f"must be true or false, got {type_name(value)} {show(value)}")
            return None
        return value

    def optional(self, data: dict, key: str, path: str, check: Callable[[str, Any], Any], default: Any = None) -> Any:
        """`check(path, data[key])` when the key is set (not null); `default` when unset or invalid."""
        if key not in data or data[key] is None:
            return default
        result = check(path, data[key])
        return default if result is None else result
