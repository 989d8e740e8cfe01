"""`inv bench.e2e`: scheduling throughput on a real control plane, side by side in one run.

One local cluster (etcd + our kube-apiserver), 500 Nodes, and for each variant 1000 pods
created before its scheduler starts (so pod creation never limits the rate). Throughput
is measured from the scheduler's own log: (pods - 1) / (last bind - first bind), with the
klog timestamps of "Successfully bound pod to node" (microseconds). Variants, in turn and
repeated round-robin so machine noise hits each alike:
  (a) in-tree plugins only            (plain `inv build`)
  (b) + the example plugin            (`inv build --spec examples/underlay/scheduler.yaml`)
  (c) + the Python extender, NodeNames (nodeCacheCapable: true)
  (d) + the Python extender, NodeList  (nodeCacheCapable: false)
  (e) as (c), the extender serving without OneWrite (head and body in two writes), to
      measure OneWrite side by side (a second extender process, started only for e)
  (f) as (b), the debuggable build (`--debuggable`, docs/explain.md), every pod opted in:
      the recorder's cost, and the annotation bytes it writes per pod
Every pod opts in to the underlay policy and every node has room for 10, so the
plugin and the extender do their real work and never run out of capacity.
Each variant's run goes to the raw file (bench/record.py: measure "throughput", side
the variant's letter, seconds the bind span, pods_per_second), so a BENCHMARKS.md row
can compare two variants with `"field": "pods_per_second"`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import record
from bench.perf import variants as variant_rows
from scheduler_build.inputs.build import default_request
from scheduler_build import settings
from scheduler_build.extender.config import ONE_WRITE_ENV

REPO = Path(__file__).resolve().parent.parent
CAPACITY_LABEL = "underlay.example.com/capacity"
POD_LABEL = {"underlay.example.com/ip": "true"}
VARIANTS = {v.name: v for v in variant_rows.E2E_VARIANTS}  # letter -> its row: what it runs, its note
OPT_IN = {"scheduler-build.io/explain": "true"}  # examples/underlay/scheduler.yaml debuggable.podLabel
_BOUND = re.compile(r'^I(\d{4}) (\d\d:\d\d:\d\d\.\d+) .*"Successfully bound pod to node" pod="([^"]+)"')


def bind_times(log_text: str, namespace: str) -> list[float]:
    """Seconds (of the day) of every bind of a pod in `namespace`, from klog lines."""
    out = []
    for line in log_text.splitlines():
        m = _BOUND.match(line)
        if m and m.group(3).startswith(namespace + "/"):
            t = dt.datetime.strptime(m.group(2), "%H:%M:%S.%f")
            out.append(t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6)
    return sorted(out)


def bind_span(times: list[float]) -> float:
    """Seconds from the first bind to the last (0 with fewer than two)."""
    if len(times) < 2:
        return 0.0
    span = times[-1] - times[0]
    return span + 86400 if span < 0 else span  # crossed midnight


def throughput(times: list[float]) -> float:
    if len(times) < 2:
        return 0.0
    span = bind_span(times)
    return (len(times) - 1) / span if span > 0 else float("inf")


def _example(dist: Path, *extra: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "invoke", "build", "--spec", str(REPO / "examples/underlay/scheduler.yaml"),
                           "--dist", str(dist), "--no-pull", "--json", *extra], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"inv build --spec {' '.join(extra)} failed: {done.stderr[-2000:]}")
    return Path(json.loads(done.stdout)["binary"]["path"])


def _binaries(k8s_version: str, cache: Path, dist: Path, want_plugin: bool, want_debuggable: bool = False) -> dict:
    from scheduler_build.build import pipeline as build

    common = dict(k8s_version=k8s_version, dist_dir=dist, cache_dir=cache, pull=False)
    out = {
        "apiserver": build.run(default_request(component="kube-apiserver", **common)).binary,
        "plain": build.run(default_request(**common)).binary,
    }
    if want_plugin:
        out["plugin"] = _example(dist)
    if want_debuggable:
        out["debuggable"] = _example(dist, "--debuggable")
    return out


def run(pods: int = 1000, nodes: int = 500, repeats: int = 1, variants: str = variant_rows.E2E_DEFAULT, k8s_version: str = settings.default("k8s.version"),
        trace: bool = False) -> dict:
    from scheduler_build.cluster import controlplane as cluster
    from testkit import extender_process
    from testkit import kubeobjects as kobj
    from scheduler_build.progress import log

    work = Path(tempfile.mkdtemp(prefix="sb-bench-e2e-"))
    rows = [VARIANTS[v] for v in variants]
    plain = [r for r in rows if r.harness == variant_rows.PLAIN]
    bins = _binaries(k8s_version, settings.cache_dir(), work / "dist", any(r.plugins for r in plain),
                     any(r.harness == variant_rows.DEBUGGABLE for r in rows))
    state_dir = work / "cluster"
    results: dict = {"pods": pods, "nodes": nodes, "repeats": repeats, "runs": {v: [] for v in variants}}
    state = cluster.up(bins["apiserver"], state_dir, etcd=settings.default("cluster.etcd"), timeout=300)
    results["kubernetes"] = state.version
    extenders: dict = {}
    try:
        api = kobj.api_client(state.admin_kubeconfig)
        log(f"    creating {nodes} nodes")
        kobj.create_nodes(api, [kobj.node_body(f"bench-{i}", labels={CAPACITY_LABEL: "10"}) for i in range(nodes)])
        one_write = [r.name for r in rows if r.extender in (variant_rows.NODE_NAMES, variant_rows.NODE_LIST)]
        if one_write:  # one extender serves them all
            started = extender_process.start_extender(work, state.admin_kubeconfig, "extender")
            extenders.update(dict.fromkeys(one_write, started))
        for r in rows:
            if r.extender == variant_rows.TWO_WRITES:
                extenders[r.name] = extender_process.start_extender(work, state.admin_kubeconfig, "extender-two-writes",
                                                                    env={ONE_WRITE_ENV: "0"})
        for rep in range(repeats):
            for v in variants:
                log(f"    [{rep + 1}/{repeats}] ({v}) {VARIANTS[v].note}: creating {pods} pods")
                results["runs"][v].append(_variant(v, f"bench-{v}-{rep}", pods, api, state, bins, extenders.get(v),
                                                   work, trace))
    finally:
        for running in {id(x): x for x in extenders.values()}.values():  # NodeNames and NodeList share one
            running.stop()
        cluster.down(state_dir)
        # Binaries, logs and configs of this run only (the build caches stay).
        shutil.rmtree(work, ignore_errors=True)
    med = {v: statistics.median(r["pods_per_second"] for r in runs) for v, runs in results["runs"].items() if runs}
    results["median_pods_per_second"] = med
    if "a" in med:
        results["ratio_to_a"] = {v: round(x / med["a"], 3) for v, x in med.items()}
    return results


def _variant(v: str, name: str, pods: int, api, state, bins: dict, serving, work: Path, trace: bool) -> dict:
    """One variant once: its pods, its scheduler (and extender entry), until every pod is bound."""
    from kubernetes import client as k

    from scheduler_build.config import schedulerconfig
    from testkit import e2e
    from testkit import kubeobjects as kobj
    from scheduler_build.progress import log

    kobj.ensure_namespace(api, name)
    row = VARIANTS[v]
    recorded = row.harness == variant_rows.DEBUGGABLE
    labels = {**POD_LABEL, **(OPT_IN if recorded else {})}
    kobj.create_pods(api, name, [kobj.pod_body(f"p{i}", name, labels=dict(labels)) for i in range(pods)])
    extenders = []
    if serving is not None:
        extenders = [schedulerconfig.extender_entry(serving.url, node_cache_capable=row.extender != variant_rows.NODE_LIST)]
    plugins = {"multiPoint": {"enabled": [{"name": "UnderlayIPLimit", "weight": 3}]}} if row.config == variant_rows.SPEC else None
    config = e2e.scheduler_config(name, state.scheduler_kubeconfig, extenders=extenders, plugins=plugins,
                                  qps=5000, burst=5000)
    binary = bins["debuggable"] if recorded else bins["plugin"] if row.plugins else bins["plain"]
    started = time.monotonic()
    sched = e2e.start_scheduler(binary, config, work, name, extra_args=e2e.EXTENDER_RETRY_ARGS if extenders else ())
    tracer = _Tracer(state, sched, serving, work / f"{name}.pyspy") if trace else None
    try:
        kobj.wait_bound(api, name, pods, 900)
        wall = time.monotonic() - started
    finally:
        traced = tracer.stop() if tracer else None
        sched.stop()
    times = bind_times(sched.log_text(), name)
    rate = throughput(times)
    # The raw file's run: measure "throughput", the variant's letter as its side (a row: "b" vs "a").
    record.run("throughput", v, bind_span(times), pods_per_second=round(rate, 3), binds=len(times))
    log(f"        {rate:.1f} pods/s ({len(times)} binds over {bind_span(times):.2f}s)")
    sizes = _annotation_bytes(api, name) if recorded else {}
    k.CoreV1Api(api).delete_collection_namespaced_pod(name, grace_period_seconds=0)
    return {"pods_per_second": round(rate, 1), "binds": len(times), "wall_seconds_from_start": round(wall, 2),
            **sizes, **({"trace": traced} if traced else {})}


def _annotation_bytes(api, namespace: str) -> dict:
    """Bytes of the recorder's annotations (keys and values) per pod: median and max, and how many pods carry them."""
    from testkit import kubeobjects as kobj

    sizes = []
    for pod in kobj.pods_by_name(api, namespace).values():
        ann = pod.metadata.annotations or {}
        mine = {k: v for k, v in ann.items() if k.startswith(("kube-scheduler-simulator.sigs.k8s.io/", "scheduler-build.io/"))}
        if mine:
            sizes.append(sum(len(k.encode()) + len(v.encode()) for k, v in mine.items()))
    return {"recorded_pods": len(sizes), "annotation_bytes_median": statistics.median(sizes) if sizes else 0,
            "annotation_bytes_max": max(sizes, default=0)}


class _Tracer:
    """CPU of each process, load average, the extender's metrics and py-spy, for one variant (--trace)."""

    def __init__(self, state, sched, extender, spy_out: Path):
        from bench import e2e_trace

        self.mod = e2e_trace
        pids = {name: rec.pid for name, rec in state.processes.items()}
        pids["scheduler"] = sched.record.pid
        self.extender = extender
        if extender is not None:
            pids["extender"] = extender.record.pid
            self.metrics = e2e_trace.parse_metrics(extender.get("/metrics")[1])
            self.spy = e2e_trace.PySpy(extender.record.pid, spy_out)
        self.load_before = e2e_trace.loadavg()
        self.cpu = e2e_trace.CpuMeter(pids).start()
        self.started = time.monotonic()

    def stop(self) -> dict:
        out = {"seconds": round(time.monotonic() - self.started, 2), "cpu_seconds": self.cpu.stop(),
               "loadavg_before": self.load_before, "loadavg_after": self.mod.loadavg()}
        if self.extender is not None:
            after = self.mod.parse_metrics(self.extender.get("/metrics")[1])
            out["extender"] = self.mod.extender_summary(self.metrics, after)
            raw = self.spy.stop()
            if raw is not None:
                out["pyspy"] = self.mod.top_frames(raw)
        from scheduler_build.progress import log

        log(f"        trace: {json.dumps({k: v for k, v in out.items() if k != 'pyspy'})}")
        return out


def markdown(results: dict) -> str:
    lines = [
        f"{results['pods']} pods on {results['nodes']} nodes, kube-apiserver {results.get('kubernetes', '')}, "
        f"median of {results['repeats']} round(s):",
        "",
        "| variant | pods/s (median) | runs | ratio to (a) |",
        "| --- | --- | --- | --- |",
    ]
    for v, row in VARIANTS.items():
        label = row.note
        if v not in results["median_pods_per_second"]:
            continue
        runs = ", ".join(f"{r['pods_per_second']:.0f}" for r in results["runs"][v])
        ratio = results.get("ratio_to_a", {}).get(v)
        lines.append(f"| ({v}) {label} | {results['median_pods_per_second'][v]:.0f} | {runs} | "
                     f"{'' if ratio is None else f'{ratio:.2f}'} |")
    return "\n".join(lines) + "\n"


def chart(results: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [v for v in VARIANTS if v in results["median_pods_per_second"]]
    values = [results["median_pods_per_second"][v] for v in keys]
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    bars = ax.bar([f"({v}) {VARIANTS[v].note}" for v in keys], values, color=[VARIANTS[v].colour for v in keys])
    for bar, value in zip(bars, values):
        ax.annotate(f"{value:.0f}", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("pods scheduled per second")
    ax.set_title(f"kube-scheduler throughput, {results['pods']} pods on {results['nodes']} nodes (median)")
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None, "CreationDate": None} if out.suffix == ".pdf" else {"Software": None})
    plt.close(fig)
    return out
