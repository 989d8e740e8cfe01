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

import os
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
    forward(signum)
    raise Terminated(signum)


def forward(signum: int) -> None:
    """Pass the signal on to every process this run started in its own session, at every depth, as a
    terminal does for Ctrl-C: `subprocess` kills a child it waits for, but not that child's children
    (`go` runs the compiler, git...), which would outlive the run. Processes started in a session of
    their own (a control plane, a harness) are stopped by the code that started them."""
    session, parents = os.getsid(0), {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                parents.setdefault(int(fields[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    pending, seen = list(parents.get(os.getpid(), [])), set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        pending += parents.get(pid, [])
        try:
            if os.getsid(pid) == session:
                os.kill(pid, signum)
        except OSError:
            pass


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
