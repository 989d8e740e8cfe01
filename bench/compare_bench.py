"""`inv bench.compare`: the time per side and the peak memory of `scheduler-build compare` on a generated
snapshot (default 1000 nodes / 5000 pods), the spec against itself.

Each run is the command a user types, as a whole process (`python -m scheduler_build compare ...`), its
wall time logged as "whole run"; the report's per-side seconds (first pod created to every pod settled)
and each side's peak resident memory (VmHWM) of its kube-scheduler and of its kube-apiserver come from the run's
own --json. The compare build is
made once before the first timed run (the build cache), so the runs time replays, not compiles.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import record

REPO = record.REPO
SIDE_FIGURES = ("seconds", "pods_per_second", "peak_rss_mib", "apiserver_peak_rss_mib")


def _inv(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scheduler_build", *argv], cwd=REPO, capture_output=True, text=True)


def run(spec: str, nodes: int, pods: int, label: str, repeats: int, apiserver: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    try:  # the snapshot and reports are the bench's scratch: the figures go to the raw file
        return _runs(work, spec, nodes, pods, label, repeats, apiserver)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _runs(work: Path, spec: str, nodes: int, pods: int, label: str, repeats: int, apiserver: str) -> dict:
    shot = work / "snapshot.json"
    args = ["snapshot.generate", "--nodes", str(nodes), "--pods", str(pods), "--out", str(shot)]
    done = _inv(*args, *(["--pod-label", label] if label else []))
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    extra = ["--apiserver", apiserver] if apiserver else []
    figures = []
    for number in range(repeats):
        out = work / f"report-{number}.json"
        started = time.monotonic()
        done = _inv("compare", str(shot), "-a", spec, "-b", spec, "--json", str(out), "--timeout", "1800", *extra)
        seconds = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        doc = json.loads(out.read_text())
        sides = doc["sides"]
        record.run("whole run", "ours", seconds, moved=doc["summary"]["moved"])
        for label_, side in sides.items():
            record.run(f"side {label_}", label_, side["seconds"], peak_rss_mib=side["peak_rss_mib"],
                       apiserver_peak_rss_mib=side["apiserver_peak_rss_mib"], pods_per_second=side["pods_per_second"])
        figures.append({"seconds": round(seconds, 1), "summary": doc["summary"],
                        "sides": {k: {x: v[x] for x in SIDE_FIGURES}
                                  for k, v in sides.items()}})
    return {"spec": spec, "nodes": nodes, "pods": pods, "runs": figures}


def markdown(results: dict) -> str:
    lines = [f"compare {results['spec']} against itself, {results['nodes']} nodes / {results['pods']} pods", "",
             "| run | whole run s | side a s | side b s | a pods/s | b pods/s | a scheduler / apiserver peak MiB | "
             "b scheduler / apiserver peak MiB | moved |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n, r in enumerate(results["runs"], 1):
        a, b = r["sides"]["a"], r["sides"]["b"]
        lines.append(f"| {n} | {r['seconds']} | {a['seconds']} | {b['seconds']} | {a['pods_per_second']} | "
                     f"{b['pods_per_second']} | {a['peak_rss_mib']} / {a['apiserver_peak_rss_mib']} | "
                     f"{b['peak_rss_mib']} / {b['apiserver_peak_rss_mib']} | {r['summary']['moved']} |")
    return "\n".join(lines)
