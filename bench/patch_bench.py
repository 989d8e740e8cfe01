"""Patch stage: our patched workspace vs the scripted baseline, side by side in one run.

(a) scheduler_build.build.patches.materialize: the series applied in memory to the
    module cache's sources, then a copy of k8s.io/kubernetes with hard links for
    untouched files (a fresh cache directory each repeat: always cold).
(b) baseline: what a release engineer scripts by hand: `cp -r` of the module,
    `chmod -R u+w`, `git apply` of the same series.
Also the dry run (`inv build.check-patches`: in-memory only) vs `git apply --check`
on a copy. Alternating repeats; medians. Run: python -m bench.patch_bench [--repeats N] [--json]
"""

from __future__ import annotations

import argparse
import sys
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from scheduler_build.resolve import versions
from scheduler_build.golang import toolchain
from scheduler_build.build import patches
from bench import record
from scheduler_build import settings

REPO = Path(__file__).resolve().parent.parent
SERIES = [REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"]


def run(repeats: int = 5, version: str = settings.default("k8s.version")) -> dict:
    resolution = versions.resolve(version, settings.cache_dir())
    source = toolchain.module_dir(versions.KUBERNETES_MODULE, resolution.version)
    ours, base, ours_check, base_check = [], [], [], []
    sizes = {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="patch-bench-") as tmp:
            tmp = Path(tmp)
            start = time.perf_counter()
            done = patches.materialize(SERIES, resolution, tmp / "cache")
            ours.append(time.perf_counter() - start)
            record.run("materialize", "ours", ours[-1])
            # New bytes on disk: files not hard-linked to the module cache.
            sizes["ours_bytes"] = sum(f.stat().st_size for f in (tmp / "cache").rglob("*") if f.is_file() and f.stat().st_nlink == 1)
            assert (done.modules[versions.KUBERNETES_MODULE] / "pkg/scheduler/framework/plugins/acmeschedulable/acme_schedulable.go").is_file()

            start = time.perf_counter()
            copy = tmp / "baseline"
            subprocess.run(["cp", "-r", str(source), str(copy)], check=True)
            subprocess.run(["chmod", "-R", "u+w", str(copy)], check=True)
            subprocess.run(["git", "apply", *map(str, SERIES)], cwd=copy, check=True)
            base.append(time.perf_counter() - start)
            record.run("materialize", "cp + git apply", base[-1])
            sizes["baseline_bytes"] = int(subprocess.run(["du", "-sb", str(copy)], capture_output=True, text=True).stdout.split()[0])

            start = time.perf_counter()
            patches.apply_series(SERIES, resolution)
            ours_check.append(time.perf_counter() - start)
            pristine = tmp / "pristine"
            subprocess.run(["cp", "-r", str(source), str(pristine)], check=True)
            start = time.perf_counter()
            subprocess.run(["git", "apply", "--check", *map(str, SERIES)], cwd=pristine, check=True)
            base_check.append(time.perf_counter() - start)
    med = statistics.median
    return {
        "kubernetes": resolution.version,
        "repeats": repeats,
        "materialize_s": med(ours),
        "baseline_copy_apply_s": med(base),
        "ratio": med(base) / med(ours),
        "check_in_memory_s": med(ours_check),
        "baseline_git_apply_check_s": med(base_check),
        **sizes,
        "raw": {"materialize": ours, "baseline": base, "check": ours_check, "git_apply_check": base_check},
    }


def markdown(r: dict) -> str:
    return "\n".join([
        f"| measurement ({r['kubernetes']}, {r['repeats']} alternating repeats, medians) | time |",
        "| --- | --- |",
        f"| (a) `patches.materialize`: in-memory apply + hard-linked copy of k8s.io/kubernetes | {r['materialize_s']:.2f} s |",
        f"| (b) baseline: `cp -r` + `chmod -R u+w` + `git apply` | {r['baseline_copy_apply_s']:.2f} s |",
        f"| ratio b/a | {r['ratio']:.1f}x |",
        f"| dry run: `build.check-patches` (in memory) | {r['check_in_memory_s'] * 1000:.0f} ms |",
        f"| dry run baseline: `git apply --check` in a copy (copy not timed) | {r['baseline_git_apply_check_s'] * 1000:.0f} ms |",
        f"| new bytes on disk: patched tree (a) / copy (b) | {r['ours_bytes'] / 2**20:.1f} MiB / {r['baseline_bytes'] / 2**20:.1f} MiB |",
    ])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result, raw = record.measure("bench.patches", lambda: run(args.repeats))
    print(f"raw file: {record.write(raw)}", file=sys.stderr)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
