"""A task run stopped by a signal, and what it leaves behind (tests/*/test_sigterm*.py).

The run starts as from a terminal (default signal dispositions, a session of its own) with a
TMPDIR of the test's own, so every temporary file or directory it makes through the usual
means is found there. While it runs, every process descending from it is noted with its start
time (the harness, etcd and kube-apiserver run in sessions of their own, so a session id alone
would miss them), and its stderr is read on a thread, so the test can wait for a line or for a
state of the machine while the run keeps printing. After the stop, `leftovers` names anything
still there: a container labelled with the run, a process it started, a mount under the test's
directories, an entry in its TMPDIR.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start ticks) of a live process, None when gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == b"Z" else (int(fields[1]), int(fields[19]))


def descendants(root: int) -> dict[int, tuple[int, str]]:
    """pid -> (start ticks, command name) of every live process under `root`, at every depth."""
    children: dict[int, list[int]] = {}
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            stats[int(entry)] = stat
            children.setdefault(stat[0], []).append(int(entry))
    found, pending = {}, list(children.get(root, []))
    while pending:
        pid = pending.pop()
        if pid in found or pid not in stats:
            continue
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        found[pid] = (stats[pid][1], name)
        pending += children.get(pid, [])
    return found


def mounts_under(*roots: Path) -> set[str]:
    """Mount points under any of `roots` (the test's own directories: the shared machine mounts elsewhere)."""
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if any(point == str(r) or point.startswith(str(r).rstrip("/") + "/") for r in roots):
            points.add(point)
    return points


class Run:
    """One task run (`python -m invoke TASK ...` or `-m scheduler_build`) to be stopped."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None):
        # Short on purpose: etcd's unix socket goes under TMPDIR and must fit 108 bytes.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="sbt-", dir="/tmp"))
        self.env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(self.tmpdir), **(env or {}))
        self.lines: list[str] = []
        self.seen: dict[int, tuple[int, str]] = {}
        self.signalled_at = 0.0

        def as_from_a_terminal() -> None:  # a background suite may hand children SIGINT ignored
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.setsid()

        self.proc = subprocess.Popen([sys.executable, *argv], cwd=cwd, env=self.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def _watch(self) -> None:
        while self.proc.poll() is None:
            self.seen.update(descendants(self.proc.pid))
            time.sleep(0.1)

    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_until(self, what: str, ready: Callable[[], bool], timeout: float = 900) -> None:
        """Until `ready()`; fails naming `what` if the run ends or the time runs out first."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                self._reader.join(timeout=10)
                raise AssertionError(f"the run ended ({self.proc.returncode}) before {what}:\n{self.stderr()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:.0f}s:\n{self.stderr()[-3000:]}")
            time.sleep(0.05)
        self.seen.update(descendants(self.proc.pid))

    def wait_line(self, prefix: str, timeout: float = 900) -> None:
        self.wait_until(f"a line starting {prefix!r}", lambda: any(l.startswith(prefix) for l in self.lines), timeout)

    def running(self, name: str) -> bool:
        """A process named `name` (its comm) runs under the run, at any depth."""
        return any(comm == name for _, comm in descendants(self.proc.pid).values())

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 300) -> float:
        """Send `sig`; wait for the exit; the seconds it took."""
        self.seen.update(descendants(self.proc.pid))
        self.signalled_at = time.monotonic()
        self.proc.send_signal(sig)
        self.proc.wait(timeout=timeout)
        seconds = time.monotonic() - self.signalled_at
        self._reader.join(timeout=5)  # not longer: a process left behind may hold the pipe open
        return seconds

    def finish(self, timeout: float = 900) -> int:
        """Let the run end by itself; its exit code."""
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)  # not longer: a process left behind may hold the pipe open
        return self.proc.returncode

    def kill(self) -> None:
        """The test's own clean-up when an assertion failed early."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid, (ticks, _) in self.seen.items():
            if (_stat(pid) or (0, -1))[1] == ticks:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def leftovers(self, *dirs: Path) -> list[str]:
        """What the stopped run left: containers, processes, mounts under `dirs` and TMPDIR, TMPDIR entries."""
        from scheduler_build.engine import RUN_LABEL, connect

        label = f"{RUN_LABEL}={socket.gethostname()}/{self.proc.pid}"
        found = [f"container {c.name}" for c in connect()._client.containers.list(all=True, filters={"label": label})]
        deadline = time.monotonic() + 5  # a killed process takes a moment to be reaped by init
        while True:
            alive = [f"process {pid} ({comm})" for pid, (ticks, comm) in self.seen.items()
                     if (_stat(pid) or (0, -1))[1] == ticks]
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        found += alive
        found += [f"mount {m}" for m in sorted(mounts_under(self.tmpdir, *dirs))]
        found += [f"temporary {p}" for p in sorted(self.tmpdir.iterdir())]
        return found

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def one_line_end(stderr: str, sig: int = signal.SIGTERM) -> str:
    """The line a stopped run ends with (signals.line), whatever it says was kept."""
    last = stderr.splitlines()[-1] if stderr.strip() else ""
    assert last.startswith(f"terminated ({signal.Signals(sig).name})"), stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    return last
