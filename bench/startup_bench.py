"""Start-up of the `scheduler-build` console script beside `python -c 'import invoke'` (its floor).

Each side runs `repeats` times, alternating, as fresh processes; medians and ratios are reported, of the
wall-clock time and of the CPU time (user + system, the process and its children): on a shared, loaded
machine the wall clock mostly measures the wait for a core, the CPU time what start-up itself costs.
Run through `inv bench.startup`; figures go into BENCHMARKS.md.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time

from bench import record

CASES = {
    "--version": ["--version"],
    "--list": ["--list"],
    "completion (TAB after image.)": ["--complete", "--", "scheduler-build", "image."],
    "help settings": ["help", "settings"],
}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _seconds(argv: list[str], cwd: str) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one run."""
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, _cpu() - cpu


def run(repeats: int = 15) -> dict:
    # What the console script runs (its wrapper is these two lines), with this interpreter and checkout.
    program = [sys.executable, "-c", "from scheduler_build.cli.entry import main; main()"]
    baseline = [sys.executable, "-c", "import invoke"]
    results: dict = {"program": " ".join(program), "baseline": " ".join(baseline), "repeats": repeats, "cases": {}}
    with tempfile.TemporaryDirectory() as empty:  # no settings file, as a pip user's fresh directory
        for name, args in CASES.items():
            ours, floor = [], []
            _seconds(program + args, empty)  # warm the page cache once
            for _ in range(repeats):
                for side, argv, into in (("ours", program + args, ours), ("baseline", baseline, floor)):
                    wall, cpu = _seconds(argv, empty)
                    into.append((wall, cpu))
                    record.run(f"{name} wall", side, wall)
                    record.run(f"{name} CPU", side, cpu)
            results["cases"][name] = {
                "median_s": statistics.median(w for w, _ in ours), "baseline_median_s": statistics.median(w for w, _ in floor),
                "cpu_median_s": statistics.median(c for _, c in ours),
                "baseline_cpu_median_s": statistics.median(c for _, c in floor)}
    return results


def markdown(results: dict) -> str:
    rows = ["| command | median | `python -c 'import invoke'` | ratio | CPU median | baseline CPU | CPU ratio |",
            "|---|---|---|---|---|---|---|"]
    for name, case in results["cases"].items():
        ratio = case["median_s"] / case["baseline_median_s"]
        cpu_ratio = case["cpu_median_s"] / case["baseline_cpu_median_s"]
        rows.append(f"| `scheduler-build {name}` | {case['median_s']:.3f} s | {case['baseline_median_s']:.3f} s | "
                    f"{ratio:.2f} | {case['cpu_median_s']:.3f} s | {case['baseline_cpu_median_s']:.3f} s | "
                    f"{cpu_ratio:.2f} |")
    return "\n".join(rows) + f"\n\n{results['repeats']} alternating runs per side, medians."
