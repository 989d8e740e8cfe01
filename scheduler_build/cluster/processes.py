"""Supervision of long-running local processes: spawn, alive, stop, logs, readiness.

A process is recorded with its pid and its start time (/proc/<pid>/stat field
22), so a pid the kernel has since reused for another process is never
signalled. Used by the control plane (etcd, kube-apiserver) and by the e2e
harness (schedulers, extenders).
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.errors import UserError
from scheduler_build.progress import log


@dataclass
class ProcessRecord:
    name: str
    pid: int
    start_ticks: int  # /proc/<pid>/stat field 22: tells a reused pid from ours
    argv: list[str]
    log: str


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces: split after its closing paren.
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None  # a zombie has finished: treat as gone
    return int(fields[19])


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child (started by another command): init reaps it


def alive(record: ProcessRecord) -> bool:
    _reap(record.pid)
    return _start_ticks(record.pid) == record.start_ticks


def spawn(name: str, argv: list[str], log_path: Path, env: dict[str, str] | None = None) -> ProcessRecord:
    """Start a long-running process in its own session, output appended to log_path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, env=env,
            )
        except OSError as exc:
            raise UserError(f"cannot start {name} ({argv[0]}): {exc.strerror}", "check the binary path and that it is executable") from None
    try:
        ticks = _start_ticks(proc.pid)
        # Popen keeps the child in its _active list once dropped, so it is reaped either
        # by us (os.waitpid in alive/stop) or by subprocess's own cleanup.
        return ProcessRecord(name=name, pid=proc.pid, start_ticks=ticks if ticks is not None else -1,
                             argv=[str(a) for a in argv], log=str(log_path))
    except BaseException:  # stopped (SIGTERM) before the caller holds a record: nobody else could end it
        proc.kill()
        proc.wait()
        raise


def stop(record: ProcessRecord, grace: float = 15.0, sig: int = signal.SIGTERM) -> bool:
    """Signal one recorded process (its whole session) and wait for it; SIGKILL after `grace`.

    Returns True if it was running. A pid that now belongs to another process is left alone.
    """
    if not alive(record):
        return False
    try:
        os.killpg(record.pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        os.kill(record.pid, sig)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(record):
            return True
        time.sleep(0.1)
    try:
        os.killpg(record.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(100):
        if not alive(record):
            break
        time.sleep(0.05)
    return True


def log_tail(path: str | Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def http_get(url: str, ctx: ssl.SSLContext | None, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def wait_http(url: str, record: ProcessRecord, timeout: float, ctx: ssl.SSLContext | None = None,
              what: str = "") -> str:
    """Poll url until it answers 200; fail early if the process exits."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not alive(record):
            log(log_tail(record.log))
            raise UserError(f"{what or record.name} exited during startup (log: {record.log})",
                            "its last log lines are above")
        try:
            code, body = http_get(url, ctx)
            if code == 200:
                return body
            last = f"HTTP {code}: {body.strip().splitlines()[-1] if body.strip() else ''}"
        except (OSError, ssl.SSLError) as exc:
            last = str(getattr(exc, "reason", exc))
        time.sleep(0.5)
    log(log_tail(record.log))
    raise UserError(
        f"{what or record.name} not ready at {url} after {timeout:.0f}s ({last}; log: {record.log})",
        "the machine may be overloaded: raise --timeout (cluster.timeout)",
    )
