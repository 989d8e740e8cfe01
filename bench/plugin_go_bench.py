"""The example plugin's Go benchmarks (Filter and Score on 16 goroutines), its code at an earlier commit
against the working tree's, alternated, into a raw file.

    python bench/plugin_go_bench.py --before badcc83 [--count 6] [--json FILE]

Both trees are the example module of this checkout; the `before` one has the plugin's source files
(not its tests: the benchmark is today's) from the commit named, in a scratch copy. Each round runs
`go test -run ^$ -bench Parallel -cpu 2` once in each tree, so a load change lands on both. The raw
file logs every benchmark line (measure = benchmark, side = before/after, seconds = per call) and
benchstat's comparison when benchstat runs (`go run golang.org/x/perf/cmd/benchstat@latest`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import record  # noqa: E402

MODULE = Path(__file__).resolve().parents[1] / "examples" / "underlay" / "plugin"
PACKAGE = "pkg/underlayiplimit"
LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+([0-9.]+) ns/op(?:\s+([0-9.]+) B/op\s+([0-9.]+) allocs/op)?")
BENCHSTAT = "golang.org/x/perf/cmd/benchstat@latest"


def before_tree(commit: str, scratch: Path) -> Path:
    """The module with the plugin's files at `commit` (a file that commit does not have is left out), but
    today's benchmark (bench_test.go), so both sides run the same one: the other tests test each side's
    own internals."""
    tree = scratch / "before"
    shutil.copytree(MODULE, tree)
    for source in (tree / PACKAGE).glob("*.go"):
        rel = f"examples/underlay/plugin/{PACKAGE}/{source.name}"
        shown = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=MODULE, capture_output=True, text=True)
        if shown.returncode != 0:
            source.unlink()  # new since `commit`: not part of the plugin then, or a test of what is new
        elif source.name != "bench_test.go":
            source.write_text(shown.stdout)
    if not (tree / PACKAGE / "bench_test.go").exists():
        shutil.copy2(MODULE / PACKAGE / "bench_test.go", tree / PACKAGE / "bench_test.go")
    return tree


def bench_once(tree: Path) -> str:
    done = subprocess.run(["go", "test", "-run", "^$", "-bench", "Parallel", "-cpu", "2", "-count", "1",
                           f"./{PACKAGE}"], cwd=tree, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"go test -bench in {tree} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def parse(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out.append({"benchmark": m.group(1), "ns_per_op": float(m.group(3)),
                        "bytes_per_op": float(m.group(4) or 0), "allocs_per_op": float(m.group(5) or 0)})
    return out


def benchstat(before: str, after: str, scratch: Path) -> str:
    (scratch / "before.txt").write_text(before)
    (scratch / "after.txt").write_text(after)
    done = subprocess.run(["go", "run", BENCHSTAT, "before.txt", "after.txt"], cwd=scratch, capture_output=True,
                          text=True, timeout=900)
    return done.stdout if done.returncode == 0 else f"benchstat failed: {done.stderr.strip()[-500:]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose plugin source is `before`")
    parser.add_argument("--count", type=int, default=6, help="alternated rounds (default 6)")
    parser.add_argument("--json", type=Path, help="the raw file (default bench/results/bench-plugin-go-<time>.json)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="plugin-go-bench-"))
    try:
        trees = {"before": before_tree(args.before, scratch), "after": MODULE}
        texts = {"before": "", "after": ""}

        def measured() -> dict:
            for _ in range(args.count):
                for side, tree in trees.items():
                    text = bench_once(tree)
                    texts[side] += text
                    for item in parse(text):
                        record.run(item["benchmark"], side, item["ns_per_op"] / 1e9, **item)
                    print(f"{side}: " + ", ".join(f"{i['benchmark']} {i['ns_per_op']:.0f} ns/op" for i in parse(text)),
                          file=sys.stderr)
            return {"before_commit": args.before, "go_test_output": texts, "benchstat": benchstat(
                texts["before"], texts["after"], scratch)}

        results, raw = record.measure("bench.plugin-go", measured, argv=["python", *sys.argv])
        print(f"raw file: {record.write(raw, args.json)}", file=sys.stderr)
        print(results["benchstat"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
