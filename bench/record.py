"""The raw file of a bench run: what ran, on what machine, under what load, and every run.

Every `bench.*` task writes one (bench/results/<task>-<UTC time>.json) through `measure`;
BENCHMARKS.md is rendered from these files (bench/report.py), never typed in. A bench
module calls `run(measure, side, seconds)` after each timed run, so the file keeps every
individual figure in the order the sides ran, with the time each finished and the load
average then; the report's medians come from these runs and nothing else.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from scheduler_build.atomic import write_atomic

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
SCHEMA = 1

_runs: list[dict] = []
_started = time.monotonic()
_partial: dict = {}  # while a checkpointed bench runs: where its raw file goes and the record's head


def run(measure: str, side: str, seconds: float, **extra: Any) -> None:
    """Log one timed run of `side` ("ours", "native", ...) for `measure`; call it right after the run."""
    _runs.append({"measure": measure, "side": side, "seconds": round(float(seconds), 6),
                  "ended_s": round(time.monotonic() - _started, 3), "load1": round(os.getloadavg()[0], 2), **extra})
    if _partial:  # a long bench stopped half way keeps the runs it made (marked partial)
        write(dict(_partial["head"], load_after=_load(), runs=list(_runs), results=None, partial=True), _partial["path"])


def machine() -> dict:
    """The measuring machine, read from it (nothing typed in)."""
    memory = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_bytes": memory, "kernel": platform.release(),
            "arch": platform.machine(), "python": platform.python_version()}


def commit() -> str:
    """HEAD of this checkout, with "-dirty" when tracked files differ from it."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    head = git("rev-parse", "HEAD").stdout.strip() or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head + ("-dirty" if dirty else "")


def shown(path: Path | str) -> str:
    """A path as a raw file records it: relative to this checkout when inside it (the spec of shards run in
    different checkouts, e.g. two CI runners' workspaces, is then the same), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def command_line(argv: list[str]) -> str:
    """The command as typed: `inv TASK ...` for invoke's entry points (sys.argv[0] is a path)."""
    program = Path(argv[0]).name if argv else ""
    if program in ("inv", "invoke", "__main__.py"):
        return " ".join(["inv", *argv[1:]])
    return " ".join(argv)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure(task: str, fn: Callable[[], Any], argv: list[str] | None = None,
            checkpoint: Path | bool | None = None, head: dict | None = None) -> tuple[Any, dict]:
    """Call `fn` and return (its results, the raw record around it).

    checkpoint: rewrite the raw file after every run (True: at its default path), `"partial": true` and
    no results until `fn` returns, so a bench stopped half way (a deadline, Ctrl-C) keeps its runs.
    head: more fields of the record, in every write (a shard's `"shard"` and `"partial": true`)."""
    _runs.clear()
    started = datetime.now(timezone.utc)
    head = {"schema": SCHEMA, "task": task, "command": command_line(argv if argv is not None else sys.argv),
            "commit": commit(),  # before the run: the tree may move while a long bench runs
            "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": machine(), "load_before": _load(),
            **(head or {})}
    _partial.clear()
    if checkpoint:
        _partial.update(path=default_path(task, head["started"]) if checkpoint is True else Path(checkpoint), head=head)
    global _started
    _started = time.monotonic()
    try:
        results = fn()
    finally:
        _partial.clear()
    return results, dict(head, load_after=_load(), runs=list(_runs), results=results)


def raw_path() -> Path | None:
    """While a checkpointed bench runs: the raw file it will write (files kept beside it go next to it)."""
    return _partial.get("path")


def default_path(task: str, when: str) -> Path:
    stamp = when.replace("-", "").replace(":", "")
    return RESULTS / f"{task.replace('.', '-')}-{stamp}.json"


def write(raw: dict, path: Path | None = None) -> Path:
    """Write the raw record atomically; its path (bench/results/ by default)."""
    path = path or default_path(raw["task"], raw["started"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(raw, indent=1, default=str) + "\n")
    return path
