"""SIGTERM and SIGHUP end a run the way Ctrl-C does.

A CI cancel, `timeout`, a terminated pod or a closed terminal sends SIGTERM or SIGHUP;
Python's default for both is to die on the spot, so no `finally` runs: the compile
container kept running, the output volume stayed in use and a `.tmp-*` directory stayed
behind. Here both raise `Terminated`, a KeyboardInterrupt, so every clean-up written for
Ctrl-C (containers removed, staging directories dropped, the previous output kept) runs
for them too; the run then ends with one line and 128 + the signal's number (143, 129),
what a shell reports for a process the signal killed.

Standard library only: the console scripts install this before anything else is imported.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

HANDLED = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """The run was asked to stop by `signum` (SIGTERM or SIGHUP)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_STOPPING = [False]


def _handler(signum: int, frame: FrameType | None) -> None:
    # Once: a second SIGTERM (a supervisor repeating itself) must not cut short the clean-up the first started.
    if _STOPPING[0]:
        return
    _STOPPING[0] = True
    raise Terminated(signum)


def install() -> None:
    """SIGTERM and SIGHUP raise Terminated in the main thread. A signal the parent set to be ignored
    (`nohup` ignores SIGHUP) stays ignored; off the main thread (an embedding program) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in HANDLED:
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _handler)


def exit_code(exc: BaseException) -> int:
    """130 for Ctrl-C, 128 + the signal's number for SIGTERM (143) and SIGHUP (129)."""
    return 128 + exc.signum if isinstance(exc, Terminated) else 130


def line(exc: BaseException, kept: str = "the previous good state is kept") -> str:
    """The one line a stopped run prints: `interrupted: ...` for Ctrl-C, `terminated (SIGTERM): ...` otherwise."""
    what = f"terminated ({signal.Signals(exc.signum).name})" if isinstance(exc, Terminated) else "interrupted"
    return f"{what}: {kept}" if kept else what


def report(exc: BaseException, kept: str = "the previous good state is kept") -> int:
    """Print the line on stderr; return the exit code."""
    print(line(exc, kept), file=sys.stderr, flush=True)
    return exit_code(exc)
