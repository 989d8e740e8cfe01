"""Python extender vs a Go standard-library extender, side by side in one run.

Both serve the same underlay-IP policy and list/watch the same cluster (the API
stub from testkit.apistub, 5000 nodes of realistic v1.Node
shape, 7 capacity-6 quotas with varied usage). The Go load generator
(bench/extender/go/loadgen) then posts, for each cluster size N, verb and mode,
the same pre-serialised body to the Python extender and then to the Go one,
for a fixed time with `concurrency` keep-alive connections, `repeats` rounds in a
row (Python, Go, Python, Go, ...: the sides alternate, so load hits both); every
reply is checked (HTTP 200, an empty Error for filter). Each run goes to the raw
file (bench/record.py: measure "<N> nodes <mode> <verb>", side "python" or "go",
its p50_s, p99_s and rps), so a BENCHMARKS.md row can show any of them.

    inv bench.extender [--nodes 100,1000,5000] [--seconds 3] [--concurrency 1] [--repeats 3]
"""

from __future__ import annotations

import platform
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Callable

import msgspec

from bench import record
from testkit import samples
from scheduler_build.progress import log, phase

from . import common


SIDES = ("python", "go")  # in this order each round: a row's ratio is Python / Go


def run(sizes: list[int], seconds: float = 3.0, concurrency: int = 1, repeats: int = 3) -> dict:
    bins = common.go_binaries()
    cells = []
    with common.cluster(max(sizes)) as stub, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = stub.kubeconfig(Path(tmp) / "kubeconfig")
        go_port, py_port = common.free_port(), common.free_port()
        urls = {"go": f"http://127.0.0.1:{go_port}", "python": f"http://127.0.0.1:{py_port}"}
        go_cmd = [str(bins["goextender"]), "-addr", f"127.0.0.1:{go_port}", "-api", stub.url]
        with phase("bench.extender", f"sizes {sizes}, {seconds}s per run, {repeats} rounds, concurrency {concurrency}"), \
                common.process(go_cmd, urls["go"]), common.process(common.python_extender(kubeconfig, py_port), urls["python"]):
            pod = samples.pod("bench-pod")
            for n in sizes:
                for mode, cache_capable in (("NodeList", False), ("NodeNames", True)):
                    body = msgspec.json.encode(samples.filter_args(pod, stub.node_objs[:n], cache_capable))
                    for verb, expect in (("filter", '"Error":""'), ("prioritize", '"Score"')):
                        cell = {"nodes": n, "mode": mode, "verb": verb, "body_bytes": len(body)}
                        load = {side: partial(common.load, bins["loadgen"], f"{url}/{verb}", body, seconds,
                                              concurrency, expect) for side, url in urls.items()}
                        cells.append(_cell(cell, load, repeats))
    return {"machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": seconds,
            "concurrency": concurrency, "repeats": repeats, "cells": cells}


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else 0.0


def _cell(cell: dict, load: dict[str, Callable[[], dict]], repeats: int) -> dict:
    """`repeats` rounds of Python then Go on one cell, every run logged; medians and each round's ratios."""
    measure = f"{cell['nodes']} nodes {cell['mode']} {cell['verb']}"
    rounds = []
    for _ in range(repeats):
        one = {}
        for side in SIDES:
            one[side] = got = load[side]()
            record.run(measure, side, got["seconds"], p50_s=round(got["p50_ms"] / 1000, 6),
                       p99_s=round(got["p99_ms"] / 1000, 6), rps=round(got["rps"], 3), requests=got["requests"])
        rounds.append(one)
        log(f"{measure:30} python {one['python']['rps']:8.1f} rps p99 {one['python']['p99_ms']:7.2f} ms"
            f" | go {one['go']['rps']:8.1f} rps p99 {one['go']['p99_ms']:7.2f} ms"
            f" | python/go rps {_ratio(one['python']['rps'], one['go']['rps']):.2f}"
            f" p99 {_ratio(one['python']['p99_ms'], one['go']['p99_ms']):.2f}")
    for side in SIDES:
        cell[side] = {key: statistics.median(r[side][key] for r in rounds) for key in ("rps", "p50_ms", "p99_ms")}
    cell["rps_ratio"] = _ratio(cell["python"]["rps"], cell["go"]["rps"])
    # Per round (the two sides ran back to back): how the ratio moves with the load between rounds.
    cell["rps_ratios"] = [_ratio(r["python"]["rps"], r["go"]["rps"]) for r in rounds]
    cell["p99_ratios"] = [_ratio(r["python"]["p99_ms"], r["go"]["p99_ms"]) for r in rounds]
    cell["runs"] = rounds
    return cell


def markdown(results: dict) -> str:
    lines = [f"{results['date']}, {results['seconds']:g}s per run after 0.5s warm-up, medians of "
             f"{results.get('repeats', 1)} rounds (Python then Go each round), "
             f"{results['concurrency']} keep-alive connection(s), {results['machine']}", "",
             "| nodes | mode | verb | body | Go rps | Go p50/p99 ms | Python rps | Python p50/p99 ms | Python/Go rps "
             "| Python/Go rps per run | Python/Go p99 per run |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in results["cells"]:
        go, py = c["go"], c["python"]
        per_run = [", ".join(f"{x:.2f}" for x in c.get(key, [])) for key in ("rps_ratios", "p99_ratios")]
        lines.append(f"| {c['nodes']} | {c['mode']} | {c['verb']} | {c['body_bytes'] / 1e6:.2f} MB | {go['rps']:.0f} | "
                     f"{go['p50_ms']:.2f} / {go['p99_ms']:.2f} | {py['rps']:.0f} | "
                     f"{py['p50_ms']:.2f} / {py['p99_ms']:.2f} | {c['rps_ratio']:.2f} | {per_run[0]} | {per_run[1]} |")
    return "\n".join(lines) + "\n"
