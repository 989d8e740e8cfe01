"""Phase lines on stderr: stdout is reserved for machine-readable results."""

from __future__ import annotations

import re
import sys
import threading
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


_LAST = [time.monotonic()]  # when a line last went to stderr: the heartbeat speaks only into a silence
HEARTBEAT = 9.0  # seconds of silence before a long step says it is alive: under the 10 s the docs promise, with room for a busy machine


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
    _LAST[0] = time.monotonic()


def log(message: str, always: bool = False) -> None:
    """Progress and details on stderr. Under -q only warnings, errors and what the caller marks `always`
    (a file replaced under --force) are printed: -q means errors and results only."""
    if _VERBOSITY[0] >= 1 or always or message.lstrip().startswith(("warning", "error")):
        _say(message)


def detail(message: str) -> None:
    """A line for -v only (e.g. an optional step that did not work out and changed nothing)."""
    if _VERBOSITY[0] >= 2:
        _say(message)


def _phase_line(message: str) -> None:
    if _VERBOSITY[0] >= 1:
        _say(message)


@contextmanager
def phase(name: str, detail: str = "") -> Iterator[dict]:
    """Print `==> name detail` on entry and `<== name ok (1.2s)` on exit.

    The yielded dict collects the elapsed seconds under "seconds" so callers can
    record phase timings (build-info.json) without timing twice; a caller sets "failed"
    in it for a step that failed without raising.
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
    # A step that ends without raising yet did not succeed (a compile whose errors are reported) says so.
    _phase_line(f"<== {name} {'FAILED' if record.get('failed') else 'ok'} ({record['seconds']:.1f}s)")


def stream_line(line: str) -> None:
    """Forward one line of tool output (go, docker) to stderr as it arrives (not with -q)."""
    if _VERBOSITY[0] < 1:
        return
    sys.stderr.write(line if line.endswith("\n") else line + "\n")
    sys.stderr.flush()
    _LAST[0] = time.monotonic()


# `go build -v` / `go install -v` name each package as it is compiled, one import path a line.
_PACKAGE = re.compile(r"^[A-Za-z0-9_.~-]+(/[A-Za-z0-9_.~+-]+)*$")
TOTAL_MARK = "scheduler-build-packages-total"  # a line `<mark> N`: how many packages the build has in all


def elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Alive:
    """A long step's progress: packages compiled (from `-v` lines, which it takes instead of printing
    them), of the total when known, and the elapsed time."""

    def __init__(self, name: str):
        self.name, self.done, self.total, self.started = name, 0, 0, time.monotonic()
        self.note = ""  # what it does while no package is compiled, e.g. waiting for a lock

    def take(self, line: str) -> bool:
        """Count a package line (or read the total); True when the line was one of those."""
        text = line.strip()
        if text.startswith(TOTAL_MARK):
            self.total = int(text.split()[-1]) if text.split()[-1].isdigit() else 0
            return True
        if _PACKAGE.match(text):  # compiler messages have a colon or spaces; a package path has neither
            self.done += 1
            return True
        return False

    def status(self) -> str:
        packages = f"{self.done}/{self.total} packages compiled" if self.total else f"{self.done} packages compiled"
        return f"    {self.name}: {packages if self.done or self.total else self.note or 'running'}, " \
               f"{elapsed(time.monotonic() - self.started)} elapsed"


@contextmanager
def alive(name: str, every: float = HEARTBEAT) -> Iterator[Alive]:
    """While the block runs, a status line whenever stderr has been silent for `every` seconds
    (not with -q): a cold compile prints nothing of its own for minutes."""
    state, stop = Alive(name), threading.Event()
    _ALIVE.append(state)

    def beat() -> None:
        while not stop.wait(min(1.0, every / 4)):
            if _VERBOSITY[0] >= 1 and time.monotonic() - _LAST[0] >= every:
                _say(state.status())

    thread = threading.Thread(target=beat, name=f"alive-{name}", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join()
        _ALIVE.remove(state)


_ALIVE: list[Alive] = []


def note(text: str) -> None:
    """What the innermost long step is doing when it is not compiling (its heartbeat says it)."""
    if _ALIVE:
        _ALIVE[-1].note = text
