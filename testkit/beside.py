"""A test tier run in the background, beside another one (`inv test`'s e2e tier beside its integration tier).

The e2e tier mostly waits on its control planes (a quarter of the CPU busy in whole runs), while the
integration tier keeps both cores busy compiling: started together, the e2e tier's wall clock hides inside
the integration tier's. Its output goes to `<tier>.log` in the run's directory (two pytest runs would
interleave on one terminal) and its tail is shown when its turn in the order comes; a run that ends early
(a failing tier, Ctrl-C) stops it, with its own teardown.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Callable

TAIL_LINES = 60
STOP_SECONDS = 180  # an e2e teardown stops its control plane and removes its state


def _lowest_priority() -> None:
    """In the child, after its new session: with autogroup scheduling every session is a group whose
    weight is set in /proc/self/autogroup, and nice alone ranks only within the group."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as group:
            group.write("19")
    except OSError:  # no autogroup scheduling here: nice is what counts
        pass


class Beside:
    """Tiers started early, each collected when its turn comes."""

    def __init__(self, cwd: Path, log: Callable[[str], None]) -> None:
        self.cwd, self.log = cwd, log
        self.procs: dict[str, tuple[subprocess.Popen, Path]] = {}

    def start(self, name: str, argv: list[str], out: Path, low_priority: bool = False) -> None:
        """Start tier `name` now, its output into out/<name>.log; `low_priority`: at nice 19, its session's
        autogroup too, so it takes only what the foreground tier leaves."""
        path = out / f"{name}.log"
        with open(path, "wb") as sink:
            proc = subprocess.Popen(argv, cwd=self.cwd, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=_lowest_priority if low_priority else None)
        self.procs[name] = (proc, path)
        self.log(f"+ tier {name}, beside the next one{' at the lowest priority' if low_priority else ''} "
                 f"(its output: {path}): " + " ".join(argv[1:]))

    def started(self, name: str) -> bool:
        return name in self.procs

    def finish(self, name: str) -> int:
        """Wait for tier `name`, show its log's tail, return its exit code."""
        proc, path = self.procs.pop(name)
        if proc.poll() is None:
            self.log(f"tier {name}: waiting for it to finish (its output: {path})")
        code = proc.wait()
        lines = path.read_text(errors="replace").splitlines()
        self.log(f"tier {name}: the last {min(TAIL_LINES, len(lines))} lines of {path}:")
        print("\n".join(lines[-TAIL_LINES:]), flush=True)
        return code

    def stop_all(self) -> None:
        """Stop every tier still running (SIGTERM to its session: pytest's teardown runs), then wait for it."""
        for name, (proc, path) in list(self.procs.items()):
            if proc.poll() is None:
                self.log(f"tier {name}: stopped (the run ended first); its output: {path}")
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                except ProcessLookupError:
                    pass
            self.procs.pop(name, None)
