"""Python extender vs a Go standard-library extender, side by side in one run.

Both serve the same underlay-IP policy and list/watch the same cluster (the API
stub from testkit.apistub, 5000 nodes of realistic v1.Node
shape, 7 capacity-6 quotas with varied usage). The Go load generator
(bench/extender/go/loadgen) then posts, for each cluster size N, verb and mode,
the same pre-serialised body to the Go extender and then to the Python one,
for a fixed time with `concurrency` keep-alive connections; every reply is
checked (HTTP 200, an empty Error for filter).

    inv bench.extender [--nodes 100,1000,5000] [--seconds 3] [--concurrency 1]
"""

from __future__ import annotations

import platform
import tempfile
import time
from pathlib import Path

import msgspec

from testkit import samples
from scheduler_build.progress import log, phase

from . import common


def run(sizes: list[int], seconds: float = 3.0, concurrency: int = 1) -> dict:
    bins = common.go_binaries()
    cells = []
    with common.cluster(max(sizes)) as stub, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = stub.kubeconfig(Path(tmp) / "kubeconfig")
        go_port, py_port = common.free_port(), common.free_port()
        go_url, py_url = f"http://127.0.0.1:{go_port}", f"http://127.0.0.1:{py_port}"
        go_cmd = [str(bins["goextender"]), "-addr", f"127.0.0.1:{go_port}", "-api", stub.url]
        with phase("bench.extender", f"sizes {sizes}, {seconds}s per cell, concurrency {concurrency}"), \
                common.process(go_cmd, go_url), common.process(common.python_extender(kubeconfig, py_port), py_url):
            pod = samples.pod("bench-pod")
            for n in sizes:
                for mode, cache_capable in (("NodeList", False), ("NodeNames", True)):
                    body = msgspec.json.encode(samples.filter_args(pod, stub.node_objs[:n], cache_capable))
                    for verb, expect in (("filter", '"Error":""'), ("prioritize", '"Score"')):
                        row = {"nodes": n, "mode": mode, "verb": verb, "body_bytes": len(body)}
                        for side, url in (("go", go_url), ("python", py_url)):
                            row[side] = common.load(bins["loadgen"], f"{url}/{verb}", body, seconds,
                                                    concurrency, expect)
                        row["rps_ratio"] = row["python"]["rps"] / row["go"]["rps"] if row["go"]["rps"] else 0.0
                        log(f"{n:5} {mode:9} {verb:10} go {row['go']['rps']:8.1f} rps p99 {row['go']['p99_ms']:7.2f} ms"
                            f" | python {row['python']['rps']:8.1f} rps p99 {row['python']['p99_ms']:7.2f} ms"
                            f" | ratio {row['rps_ratio']:.2f}")
                        cells.append(row)
    return {"machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "seconds": seconds,
            "concurrency": concurrency, "cells": cells}


def markdown(results: dict) -> str:
    lines = [f"{results['date']}, {results['seconds']:g}s per cell after 0.5s warm-up, "
             f"{results['concurrency']} keep-alive connection(s), {results['machine']}", "",
             "| nodes | mode | verb | body | Go rps | Go p50/p99 ms | Python rps | Python p50/p99 ms | Python/Go rps |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in results["cells"]:
        go, py = c["go"], c["python"]
        lines.append(f"| {c['nodes']} | {c['mode']} | {c['verb']} | {c['body_bytes'] / 1e6:.2f} MB | {go['rps']:.0f} | "
                     f"{go['p50_ms']:.2f} / {go['p99_ms']:.2f} | {py['rps']:.0f} | "
                     f"{py['p50_ms']:.2f} / {py['p99_ms']:.2f} | {c['rps_ratio']:.2f} |")
    return "\n".join(lines) + "\n"
