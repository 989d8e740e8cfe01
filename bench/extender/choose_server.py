"""Measure server libraries and JSON libraries for the Python extender.

Servers: uvicorn (httptools + uvloop, the shipped adapter), aiohttp (uvloop),
granian (Rust HTTP, one worker), all wrapping the same Extender core, driven by
the Go load generator with filter requests: NodeList at 1000 nodes (megabytes)
and NodeNames at 5000 nodes. JSON: orjson vs the standard json module on the
1000-node NodeList request (decode + encode the reply), in-process.

    python -m bench.extender.choose_server   (prints a markdown table)
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

from testkit import samples

from . import common


def servers(kubeconfig: Path) -> dict[str, tuple[list[str], dict]]:
    env = {"BENCH_KUBECONFIG": str(kubeconfig), "PYTHONPATH": str(common.HERE.parent.parent)}
    out = {}
    port = common.free_port()
    out["uvicorn+httptools+uvloop"] = (common.python_extender(kubeconfig, port), port, env)
    port = common.free_port()
    out["aiohttp+uvloop"] = ([sys.executable, "-m", "bench.extender.candidates", str(port)], port, env)
    port = common.free_port()
    out["granian (1 worker, uvloop)"] = (
        [sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--loop", "uvloop", "--no-ws", "--log-level", "warning", "--factory",
         "bench.extender.candidates:granian_app"], port, env)
    return out


def json_libs(body: bytes, rounds: int = 20) -> dict[str, float]:
    """Decode a filter request and encode the reply that echoes its nodes."""
    import msgspec

    from scheduler_build.extender import protocol

    def generic(loads, dumps):
        def run():
            obj = loads(body)
            dumps({"Nodes": obj["Nodes"], "NodeNames": None, "FailedNodes": {}, "Error": ""})
        return run

    def typed():  # what the extender ships: typed fast path, node items kept as raw bytes
        args = protocol.decode_extender_args(body)
        protocol.dumps({"Nodes": {"metadata": {}, "items": [n.raw for n in args.nodes]}, "NodeNames": None,
                        "FailedNodes": {}, "Error": ""})

    cases = {"json (stdlib), full decode": generic(json.loads, lambda o: json.dumps(o).encode()),
             "orjson, full decode": generic(orjson.loads, orjson.dumps),
             "msgspec, full decode": generic(msgspec.json.decode, msgspec.json.encode),
             "msgspec, typed fields + raw node items (shipped)": typed}
    results = {}
    for name, fn in cases.items():
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        results[name] = statistics.median(times) * 1000
    return results


def main() -> None:
    bins = common.go_binaries()
    rows = []
    with common.cluster(5000) as stub, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = stub.kubeconfig(Path(tmp) / "kubeconfig")
        pod = samples.pod("bench-pod")
        bodies = {
            "filter NodeList 1000": orjson.dumps(samples.filter_args(pod, stub.node_objs[:1000], False)),
            "filter NodeNames 5000": orjson.dumps(samples.filter_args(pod, stub.node_objs, True)),
        }
        for name, (args, port, env) in servers(kubeconfig).items():
            url = f"http://127.0.0.1:{port}"
            with common.process(args, url, env):
                for label, body in bodies.items():
                    res = common.load(bins["loadgen"], url + "/filter", body, 4, 2, '"Error":""')
                    rows.append((name, label, res))
                    print(f"{name:28} {label:24} {res['rps']:8.1f} rps  p50 {res['p50_ms']:7.2f} ms  "
                          f"p99 {res['p99_ms']:7.2f} ms", file=sys.stderr, flush=True)
        jl = json_libs(bodies["filter NodeList 1000"])
    print("| server | request | rps | p50 ms | p99 ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, label, res in rows:
        print(f"| {name} | {label} ({len(bodies[label]) / 1e6:.1f} MB) | {res['rps']:.0f} | {res['p50_ms']:.2f} | {res['p99_ms']:.2f} |")
    print()
    print("| JSON library | decode request + encode reply, 1000-node NodeList, median ms |")
    print("| --- | ---: |")
    for name, ms in jl.items():
        print(f"| {name} | {ms:.1f} |")


if __name__ == "__main__":
    main()
