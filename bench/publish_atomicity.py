"""Does a reader of a published output path ever see a half-written output? (issue 29)

One process publishes a tree again and again with atomic.publish_dir (a real directory swapped in
by renameat2 RENAME_EXCHANGE); another reads the path as fast as it can: the directory must always
exist, always list every file, and every file must be whole (its content carries its own length and
digest). `python bench/publish_atomicity.py [SECONDS] [--json OUT]` prints the counts.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scheduler_build.atomic import publish_dir  # noqa: E402

NAMES = ("kube-scheduler", "build-info.json", "kube-scheduler.spdx.json")
SIZE = 256 * 1024  # bytes per file: big enough that a write takes several syscalls


def _content(version: int, name: str) -> bytes:
    unit = f"{name} v{version} ".encode()
    body = (unit * (SIZE // len(unit) + 1))[:SIZE]
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def whole(data: bytes) -> bool:
    head, _, body = data.partition(b"\n")
    return len(body) == SIZE and hashlib.sha256(body).hexdigest().encode() == head


def publisher(root: str, stop_at: float, counts, publish=publish_dir) -> None:
    final, version = Path(root) / "linux-amd64", 0
    while time.monotonic() < stop_at:
        version += 1
        staging = Path(tempfile.mkdtemp(prefix=".tmp-linux-amd64-", dir=root))
        for name in NAMES:
            (staging / name).write_bytes(_content(version, name))
        publish(staging, final)
        counts["publishes"] = version


def reader(root: str, stop_at: float) -> dict:
    """Open the path's directory, list it and read each file through that directory (as `tar -C`, `cp -r`
    or a tool following the path once do). A short view is judged against the tree the path names then:
    a tree swapped out and being removed is the previous output going away, not a half-written one."""
    final = Path(root) / "linux-amd64"
    seen = {"reads": 0, "absent": 0, "half_written": 0, "mixed_versions": 0, "previous_removed_under_reader": 0}
    while time.monotonic() < stop_at:
        try:
            fd = os.open(final, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            seen["absent"] += 1
            continue
        try:
            seen["reads"] += 1
            names, versions, short = set(os.listdir(fd)), set(), False
            for name in NAMES:
                try:
                    with open(name, "rb", opener=lambda path, flags: os.open(path, flags, dir_fd=fd)) as handle:
                        data = handle.read()
                except FileNotFoundError:
                    short = True
                    continue
                if not whole(data):
                    short = True
                versions.add(data.split(b" v", 1)[1].split(b" ", 1)[0] if b" v" in data else b"?")
            short = short or not set(NAMES) <= names
            try:
                swapped = os.fstat(fd).st_ino != os.stat(final).st_ino
            except FileNotFoundError:  # the path named nothing for a moment: never with publish_dir
                seen["absent"] += 1
                continue
            if short:
                seen["previous_removed_under_reader" if swapped else "half_written"] += 1
            elif len(versions) > 1:
                seen["mixed_versions"] += 1
        finally:
            os.close(fd)
    return seen


def measure(seconds: float, publish=publish_dir) -> dict:
    with tempfile.TemporaryDirectory() as root:
        first = Path(tempfile.mkdtemp(prefix=".tmp-linux-amd64-", dir=root))
        for name in NAMES:
            (first / name).write_bytes(_content(0, name))
        publish_dir(first, Path(root) / "linux-amd64")
        stop_at = time.monotonic() + seconds
        with multiprocessing.Manager() as manager:
            counts = manager.dict(publishes=0)
            proc = multiprocessing.get_context("fork").Process(target=publisher, args=(root, stop_at, counts, publish))
            proc.start()
            seen = reader(root, stop_at)
            proc.join()
            seen["publishes"] = counts["publishes"]
        seen["leftovers"] = sorted(os.listdir(root))
    return seen


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else 10.0
    load_before = os.getloadavg()
    runs = [measure(seconds) for _ in range(3)]
    result = {
        "command": " ".join(["python", "bench/publish_atomicity.py", *sys.argv[1:]]),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                    "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
        "load_before": load_before, "load_after": os.getloadavg(), "seconds_per_run": seconds, "runs": runs,
    }
    print(json.dumps(result, indent=2))
    if "--json" in sys.argv:
        Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
