"""Phase lines on stderr: stdout is reserved for machine-readable results."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator


# 0: quiet (errors and warnings only), 1: phase lines (default), 2: verbose (also the settings files read).
_VERBOSITY = [1]


def set_verbosity(level: int) -> None:
    """`scheduler-build -q` / `-v`."""
    _VERBOSITY[0] = level


def verbosity() -> int:
    return _VERBOSITY[0]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _phase_line(message: str) -> None:
    if _VERBOSITY[0] >= 1:
        log(message)


@contextmanager
def phase(name: str, detail: str = "") -> Iterator[dict]:
    """Print `==> name detail` on entry and `<== name ok (1.2s)` on exit.

    The yielded dict collects the elapsed seconds under "seconds" so callers can
    record phase timings (build-info.json) without timing twice.
    """
    record: dict = {}
    _phase_line(f"==> {name}{': ' + detail if detail else ''}")
    start = time.monotonic()
    try:
        yield record
    except BaseException as exc:
        record["seconds"] = round(time.monotonic() - start, 3)
        ended = "stopped" if isinstance(exc, KeyboardInterrupt) else "FAILED"  # Ctrl-C, SIGTERM, SIGHUP
        _phase_line(f"<== {name} {ended} after {record['seconds']:.1f}s")
        raise
    record["seconds"] = round(time.monotonic() - start, 3)
    _phase_line(f"<== {name} ok ({record['seconds']:.1f}s)")


def stream_line(line: str) -> None:
    """Forward one line of tool output (go, docker) to stderr as it arrives (not with -q)."""
    if _VERBOSITY[0] < 1:
        return
    sys.stderr.write(line if line.endswith("\n") else line + "\n")
    sys.stderr.flush()
