"""Processes that would make the same thing take turns on a file lock: the second waits for the
first, then finds the thing made, instead of making it a second time beside it.

The lock is the kernel's (flock), so a holder that died, however, never blocks the next one. The
holder writes its pid and command into the lock file, so a waiter can say whom it waits for.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from scheduler_build.progress import log


@contextmanager
def turn(path: Path, doing: str, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the lock `path` (created if missing, never truncated while another holds it) for the block.
    A waiter logs `waiting for pid N (command): it is <doing> (lock PATH)`; `on_wait(holder)` is called
    before it waits and `on_wait("")` once it holds the lock."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not truncated: the holder's line stays readable
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
            log(f"    waiting for {holder}: it is {doing} (lock {path})")
            if on_wait:
                on_wait(holder)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if on_wait:
                on_wait("")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({shlex.join(sys.argv)[:200]})\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def try_turn(path: Path) -> Iterator[bool]:
    """The lock `path` if nobody holds it (True for the block), else False at once: for work that may
    skip what another process is using (`clean --volume` and a busy builder)."""
    path = Path(path)
    if not path.is_file():
        yield True
        return
    fd = os.open(path, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
