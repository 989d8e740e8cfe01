"""`inv` start-up: the task layer without the extender's heavy packages vs with them (issue 18).

Before issue 18, settings.py, options.py and commands/extender.py imported the extender package,
so every `inv` run loaded prometheus_client, msgspec and uvicorn's neighbours. The baseline re-creates
that cost in this tree (the task layer plus `scheduler_build.extender`); the candidate is the task layer
as it is. Each side runs in a fresh interpreter, the two interleaved; medians.

    python -m bench.startup_extender_bench [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIDES = {
    "baseline (task layer + extender, as before)": "import scheduler_build.commands, scheduler_build.extender",
    "candidate (task layer, extender_config leaf)": "import scheduler_build.commands",
}


def _once(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    return time.perf_counter() - start


def run(repeats: int = 15) -> dict:
    seconds: dict[str, list[float]] = {side: [] for side in SIDES}
    for _ in range(repeats):
        for side, code in SIDES.items():
            seconds[side].append(_once(code))
    medians = {side: round(statistics.median(v), 3) for side, v in seconds.items()}
    base, cand = medians.values()
    return {"repeats": repeats, "median_seconds": medians, "saving_ms": round(1000 * (base - cand)),
            "ratio": round(cand / base, 2), "raw": seconds}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    print(json.dumps(run(parser.parse_args().repeats), indent=2))


if __name__ == "__main__":
    main()
