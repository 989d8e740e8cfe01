"""`inv bench.build --plugin-edit --baseline REF`: this tree's plugin-edit loop beside another commit's.

Issue 19 asks that the engine-API compile (no host path mounted) keep the local no-change
rebuild and the plugin-edit loop within 10% of before it (a499fca, bind mounts). Both trees run
their own `bench.plugin_edit_bench` in a child process (the baseline from a temporary `git
worktree` of REF, removed afterwards), alternating runs (this tree, REF, this tree, ...) so
the machine's load hits both sides; each run alternates with the native `go build` as usual.
Both share the cache directory and the Go build cache volume, as two checkouts on one machine
do. Medians over every round of every run are reported, and the ratio this/REF.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import record

REPO = Path(__file__).resolve().parent.parent
CHILD = ("import json, sys\nimport bench.plugin_edit_bench as m\n"
         "print(json.dumps(m.run(sys.argv[1], int(sys.argv[2]))))\n")


def _run_tree(tree: Path, k8s_version: str, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, "-c", CHILD, k8s_version, str(repeats)], cwd=tree, env=env,
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the plugin-edit bench in {tree} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(baseline: str, k8s_version: str, runs: int = 3, repeats: int = 3) -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", baseline], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    ours_commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                 check=True).stdout.strip()
    worktree = Path(tempfile.mkdtemp(prefix="sb-baseline-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(worktree), commit], cwd=REPO, check=True)
    sides: dict[str, list[dict]] = {"ours": [], "baseline": []}
    loads = []
    try:
        for _ in range(runs):
            for side, tree in (("ours", REPO), ("baseline", worktree)):
                loads.append(os.getloadavg()[0])
                result = _run_tree(tree, k8s_version, repeats)
                sides[side].append(result)
                for kind in ("edit", "nochange"):  # the child's rounds, in the order it ran them
                    for seconds in result[f"{kind}_ours_s"]:
                        record.run(kind, side, seconds)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, check=False)
        worktree.parent.rmdir()
    figures = {side: {kind: [s for r in results for s in r[f"{kind}_ours_s"]] for kind in ("edit", "nochange")}
               for side, results in sides.items()}
    phases = {side: {kind: _phase_medians([p for r in results for p in r[f"{kind}_phases"]])
                      for kind in ("edit", "nochange")} for side, results in sides.items()}
    native = {kind: [s for r in sides["ours"] + sides["baseline"] for s in r[f"{kind}_native_s"]]
              for kind in ("edit", "nochange")}
    med = statistics.median
    return {
        "ours": ours_commit, "baseline": commit, "runs": runs, "repeats": repeats, "load_averages": loads,
"figures": figures, "phases": phases, "native": native,
        "ratios": {kind: med(figures["ours"][kind]) / med(figures["baseline"][kind]) for kind in ("edit", "nochange")},
    }


def _phase_medians(rounds: list[dict]) -> dict[str, float]:
    names = sorted({name for phases in rounds for name in phases})
    return {name: round(statistics.median(p.get(name, 0.0) for p in rounds), 3) for name in names}


def markdown(results: dict) -> str:
    med = statistics.median
    ours, base = results["figures"]["ours"], results["figures"]["baseline"]
    n = results["runs"] * results["repeats"]
    loads = results["load_averages"]
    rows = [f"| measure (median of {n}, load {min(loads):.1f}-{max(loads):.1f}) | this tree ({results['ours']}) | "
            f"baseline ({results['baseline']}) | ratio | native `go build` |", "|---|---|---|---|---|"]
    for kind, label in (("edit", "plugin edit → verified binary"), ("nochange", "no-change rebuild")):
        rows.append(f"| {label} | {med(ours[kind]):.2f} s | {med(base[kind]):.2f} s | {results['ratios'][kind]:.2f} | "
                    f"{med(results['native'][kind]):.2f} s |")
    for kind in ("edit", "nochange"):
        for side in ("ours", "baseline"):
            shown = ", ".join(f"{k} {v:.2f}" for k, v in results["phases"][side][kind].items() if v >= 0.01)
            rows.append(f"\n{kind}, {side}: phase medians (s): {shown}")
    return "\n".join(rows)
