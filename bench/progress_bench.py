"""`inv bench.build --progress`: how long a cold `inv build` of the example stays silent on stderr.

Issue 29 asks that a cold build print progress at least every 10 s. This runs the real command
(`python -m invoke build`, the bundled example spec) as a user would, cold as bench.build's cold
side: a new Go build-cache volume (and so a new output volume) and a new dist directory (no seed
binary, so the action record cannot skip the compile). Every stderr line is timestamped as it
arrives; the figure is the longest silence, counting the start of the process to its first line
and its last line to its exit. Nothing is asserted: the raw file keeps every line with its time and
the load then, so a gap can be read against what the machine was doing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench import record
from scheduler_build.build import compile as compile_stage
from scheduler_build.engine import connect

REPO = Path(__file__).resolve().parent.parent
COMPILED = "packages compiled"  # the heartbeat's count (progress.Alive): proof a compile ran


def _timed_lines(argv: list[str], env: dict) -> tuple[int, list[list], float, str]:
    """Run `argv`; (exit code, [[seconds since start, load1, line], ...], seconds to exit, stdout)."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1)
    lines = []
    assert proc.stderr is not None and proc.stdout is not None
    for line in proc.stderr:
        lines.append([round(time.monotonic() - started, 3), round(os.getloadavg()[0], 2), line.rstrip("\n")])
    stdout = proc.stdout.read()
    code = proc.wait()
    return code, lines, round(time.monotonic() - started, 3), stdout


def _gaps(lines: list[list], total: float) -> list[tuple[float, str]]:
    """Every silence: (seconds, the line that ended it, or "<exit>")."""
    stamps = [0.0] + [line[0] for line in lines] + [total]
    ends = [line[2] for line in lines] + ["<exit>"]
    return [(round(b - a, 3), end) for a, b, end in zip(stamps, stamps[1:], ends)]


def cold_once(k8s_version: str | None, work: Path) -> dict:
    """One cold `inv build` of the example; its lines, gaps and the longest gap."""
    volume = f"sb-bench-progress-{uuid.uuid4().hex[:8]}"
    argv = [sys.executable, "-m", "invoke", "build", "--no-pull", "--gocache-volume", volume,
            "--dist", str(work / f"dist-{volume}")] + (["--k8s-version", k8s_version] if k8s_version else [])
    env = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        code, lines, total, stdout = _timed_lines(argv, env)
    finally:
        engine = connect()
        for name in (volume, compile_stage.out_volume(volume)):
            if engine.volume_size(name) is not None:
                engine.remove_volume(name)
    if code != 0:
        raise RuntimeError(f"cold build failed ({code}): " + "\n".join(line[2] for line in lines[-20:]))
    if not any(COMPILED in line[2] for line in lines):
        raise RuntimeError("no compile ran (no heartbeat counted packages): the build was not cold")
    gaps = _gaps(lines, total)
    longest = max(gaps)
    return {"command": " ".join(["inv", *argv[3:]]), "seconds": total, "lines": lines, "max_gap_s": longest[0],
            "max_gap_ended_by": longest[1], "gaps_over_10s": [g for g in gaps if g[0] > 10.0],
            "binary": stdout.strip()}


def run(k8s_version: str | None = None, runs: int = 1) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sb-bench-progress-"))
    results: dict = {"runs": []}
    try:
        for _ in range(runs):
            one = cold_once(k8s_version, work)
            record.run("cold build: longest stderr silence", "ours", one["max_gap_s"], build_seconds=one["seconds"])
            results["runs"].append(one)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["max_gap_s"] = max(one["max_gap_s"] for one in results["runs"])
    return results


def markdown(results: dict) -> str:
    rows = ["| cold `inv build` of the example | build | longest stderr silence | ended by | silences > 10 s |",
            "|---|---|---|---|---|"]
    for one in results["runs"]:
        rows.append(f"| run | {one['seconds']:.0f} s | {one['max_gap_s']:.1f} s | `{one['max_gap_ended_by'][:60]}` | "
                    f"{len(one['gaps_over_10s'])} |")
    return "\n".join(rows)
