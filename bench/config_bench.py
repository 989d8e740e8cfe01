"""Cost of `inv config.validate`'s binary check: isolated container vs the bare binary, side by side.

(a) `config_validate.validate_with_binary`: a throw-away container of the builder image with
    --network none, uid 65532, read-only mounts (what `inv config.validate` does);
(b) baseline: the same binary run directly on the host with the same flags and config.
Alternated in one process so machine noise hits both; medians and the ratio a/b.
Also: the in-tree plugin names of a version cold (read from the module cache's names.go)
and warm (the per-version cache file), and rendering the example spec.

Run: python -m bench.config_bench [BINARY] [--repeats N]   (default binary: dist/kube-scheduler/*/linux-*/)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from scheduler_build.config import render
from scheduler_build.config import validate as config_validate
from scheduler_build.resolve import intree
from scheduler_build import pki
from bench import record
from scheduler_build import settings
from scheduler_build import spec as spec_mod

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "tests" / "data" / "config" / "specs" / "intree-full.yaml"


def _host_run(binary: Path, config: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "kc").write_text(config_validate.DUMMY_KUBECONFIG)
        doc = yaml.safe_load(config)
        doc["clientConnection"]["kubeconfig"] = str(work / "kc")
        # the TLS stand-in needed by the intree-full spec's extender, as the container path mounts one
        for ext in doc.get("extenders") or []:
            tls = ext.get("tlsConfig") or {}
            if "caFile" in tls:
                (work / "ca.crt").write_bytes(pki.self_signed_pems()["ca"])
                tls["caFile"] = str(work / "ca.crt")
        (work / "c.yaml").write_text(render.dump(doc))
        start = time.perf_counter()
        proc = subprocess.run([str(binary), f"--config={work / 'c.yaml'}", f"--write-config-to={work / 'out.yaml'}",
                               "--master=https://127.0.0.1:1", "--authentication-skip-lookup=true", "--v=0"],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        assert proc.returncode == 0, proc.stderr[-500:]
        return elapsed


def _container_run(binary: Path, config: str, image: str) -> float:
    start = time.perf_counter()
    verdict = config_validate.validate_with_binary(binary, config, image)
    elapsed = time.perf_counter() - start
    assert verdict.ok, verdict.output[-500:]
    return elapsed


def run(binary: Path, repeats: int = 7) -> dict:
    spec = spec_mod.load(SPEC)
    config = render.config_text(spec)
    image = config_validate.builder_image()
    version = "v" + subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.split("v", 1)[1].strip()
    container, host = [], []
    _container_run(binary, config, image)  # warm the page cache for both
    for _ in range(repeats):
        container.append(_container_run(binary, config, image))
        record.run("validate", "container", container[-1])
        host.append(_host_run(binary, config))
        record.run("validate", "host", host[-1])
    cache_root = settings.cache_dir()
    cached = cache_root / "intree-plugins" / f"{version}.json"
    cold, warm = [], []
    for _ in range(3):
        cached.unlink(missing_ok=True)
        start = time.perf_counter()
        intree.in_tree_plugins(version, cache_root)
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        intree.in_tree_plugins(version, cache_root)
        warm.append(time.perf_counter() - start)
    renders = []
    example = spec_mod.load(REPO / "examples" / "underlay" / "scheduler.yaml", check_files=False)
    for _ in range(20):
        start = time.perf_counter()
        render.render_files(example, "r/x:1")
        renders.append(time.perf_counter() - start)
    med = statistics.median
    return {
        "binary": str(binary), "version": version, "repeats": repeats,
        "validate_container_median_s": round(med(container), 3),
        "validate_host_median_s": round(med(host), 3),
        "ratio_container_over_host": round(med(container) / med(host), 2),
        "intree_names_cold_median_s": round(med(cold), 3),
        "intree_names_warm_median_s": round(med(warm), 5),
        "render_example_median_ms": round(med(renders) * 1000, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    binary = Path(args.binary) if args.binary else sorted(REPO.glob("dist/kube-scheduler/*/linux-*/kube-scheduler"))[-1]
    result, raw = record.measure("bench.config", lambda: run(binary, args.repeats))
    print(f"raw file: {record.write(raw)}", file=sys.stderr)
    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
