"""The extender's nesting bound (extender/depth.py) beside the decoding it guards.

`depth.too_deep` runs on every request body before msgspec decodes it; its cost is shown beside the
decoder's own (`protocol.decode_extender_args` without the bound), for a filter request in both
forms: the full NodeList (nodeCacheCapable false) and NodeNames. Interleaved, medians.

    python -m bench.depth_bench [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import msgspec

from scheduler_build.extender import depth, protocol
from testkit import samples


def _median_ms(fn, body: bytes, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(body)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run(repeats: int = 30, sizes: tuple[int, ...] = (1000, 5000)) -> list[dict]:
    decode = protocol.decode_extender_args.__wrapped__  # the decoder without the bound
    rows = []
    pod = samples.pod("p")
    for size in sizes:
        nodes = [samples.node(f"n{i}") for i in range(size)]
        for names in (False, True):
            body = msgspec.json.encode(samples.filter_args(pod, nodes, names))
            bound = decoded = 0.0
            for _ in range(3):  # interleaved rounds
                bound += _median_ms(depth.too_deep, body, repeats) / 3
                decoded += _median_ms(decode, body, repeats) / 3
            rows.append({"nodes": size, "form": "NodeNames" if names else "NodeList", "bytes": len(body),
                         "too_deep_ms": bound, "decode_ms": decoded})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    rows = run(parser.parse_args().repeats)
    print("| filter body | bytes | depth.too_deep | decode | ratio |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['nodes']} nodes, {r['form']} | {r['bytes']:,} | {r['too_deep_ms']:.3f} ms | "
              f"{r['decode_ms']:.3f} ms | {r['too_deep_ms'] / r['decode_ms']:.2f} |")


if __name__ == "__main__":
    main()
