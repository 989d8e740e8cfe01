"""bench: side-by-side benchmarks; figures go into BENCHMARKS.md."""

import importlib
import sys
from pathlib import Path

from invoke import Collection, task

from bench import record
from bench.perf import variants as perf_variants
from scheduler_build.atomic import write_atomic
from scheduler_build.progress import log
from scheduler_build.errors import UserError
from scheduler_build.cli.task_api import emit, emit_json, flag_help, option, user_errors

BENCH_DIR = Path(__file__).resolve().parent


def _bench_module(name: str):
    # Imported when the task runs: each benchmark pulls in heavy optional tools.
    return importlib.import_module(f"bench.{name}")


def _report(task_name: str, module, fn, json: bool, checkpoint: bool = False) -> dict:
    """Run `fn` under bench/record.py (its raw file goes to bench/results/), then print its figures:
    as JSON, else the module's Markdown table. checkpoint: the raw file is rewritten after every run
    (a long bench stopped half way keeps its runs, marked partial)."""
    results, raw = record.measure(task_name, fn, checkpoint=checkpoint)
    log(f"raw file: {record.write(raw).relative_to(record.REPO)}")
    if json:
        emit_json(results, sort_keys=False)
    else:
        emit(module.markdown(results))
    return results


@task(name="build", help={
    "k8s-version": flag_help("k8s.version", after="; built and measured"),
    "repeats": "warm runs per side (default 5)",
    "no-cold": "skip the two cold builds (minutes each)",
    "plugin-edit": "instead: the example plugin edited (and not) vs its own native `go build ./cmd/scheduler`",
    "fresh-worker": "instead: a fresh worker (empty cache dir and module cache, a new empty engine, the builder "
                    "image loaded inside the clock) building a key another worker pushed with --cache-to, alternated "
                    "with a local cold build (docs/remote-engine.md)",
    "baseline": "with --plugin-edit: this tree beside another commit (e.g. a499fca), alternating runs",
    "runs": "with --baseline or --fresh-worker: runs per side (default 3); with --progress: cold builds (default 1)",
    "progress": "instead: cold `inv build` runs of the example, every stderr line timestamped: the longest silence",
    "json": "print raw figures as JSON instead of a Markdown table",
})
@user_errors
def build_bench(c, k8s_version=None, repeats=5, no_cold=False, plugin_edit=False, fresh_worker=False, json=False,
                baseline=None, runs=None, progress=False):
    """Warm `inv build` (main package relinked) vs a native `go build`, plus cold time and peak memory."""
    if progress:
        module = _bench_module("progress_bench")
        _report("bench.build.progress", module, lambda: module.run(k8s_version, int(runs or 1)), json)
        return
    if fresh_worker:
        module = _bench_module("fresh_worker_bench")
        text = "3" if runs is None else str(runs).strip()
        rounds = int(text) if text.isdigit() else 0
        if rounds < 1:
            raise UserError(f"--runs {runs}: must be at least 1", "e.g. --runs 3 (each round is two cold builds)")
        _report("bench.build.fresh-worker", module, lambda: module.run(option(c, "k8s.version", k8s_version), rounds),
                json, checkpoint=True)  # minutes per run: keep each
        return
    if baseline:
        if not plugin_edit:
            raise UserError("--baseline compares the plugin-edit loop", "add --plugin-edit")
        module = _bench_module("baseline_bench")
        _report("bench.build.baseline", module,
                lambda: module.run(baseline, option(c, "k8s.version", k8s_version), int(runs or 3), int(repeats)), json)
        return
    if plugin_edit:
        module = _bench_module("plugin_edit_bench")
        _report("bench.build.plugin-edit", module, lambda: module.run(option(c, "k8s.version", k8s_version), int(repeats)),
                json)
        return
    module = _bench_module("build_bench")
    _report("bench.build", module, lambda: module.run(option(c, "k8s.version", k8s_version), int(repeats), cold=not no_cold),
            json)


@task(name="extender", help={
    "nodes": "comma-separated cluster sizes (default 100,1000,5000)",
    "seconds": "measured seconds per cell (default 3)",
    "concurrency": "keep-alive connections of the load generator (default 1, as kube-scheduler)",
    "repeats": "rounds per cell, Python then Go each round, every run in the raw file (default 3)",
    "json": "print raw figures as JSON instead of a Markdown table",
})
@user_errors
def extender_bench(c, nodes="100,1000,5000", seconds=3.0, concurrency=1, repeats=3, json=False):
    """Python extender vs a Go stdlib extender: filter/prioritize, NodeList/NodeNames, rps and p50/p99."""
    if int(repeats) < 1:
        raise UserError(f"--repeats {repeats}: must be at least 1", "e.g. --repeats 3")
    module = _bench_module("extender.run")
    sizes = [int(n) for n in str(nodes).split(",") if n.strip()]
    _report("bench.extender", module, lambda: module.run(sizes, float(seconds), int(concurrency), int(repeats)), json)


@task(name="image", help={
    "k8s-version": flag_help("k8s.version", after="; of the native build to package"),
    "repeats": "runs per measurement (default 3)",
    "json": "print raw figures as JSON instead of Markdown tables",
})
@user_errors
def image_bench(c, k8s_version=None, repeats=3, json=False):
    """Image size vs binary, image.build cold/warm vs `docker build`, push vs `docker push` to a local registry."""
    module = _bench_module("image_bench")
    _report("bench.image", module, lambda: module.run(option(c, "k8s.version", k8s_version), int(repeats)), json)


@task(name="e2e", help={
    "pods": "pods per variant (default 1000)",
    "nodes": "Nodes in the cluster (default 500)",
    "repeats": "round-robin rounds over the variants; medians are reported (default 1)",
    "variants": "which of " + ", ".join(f"{v.name} ({v.note})" for v in perf_variants.E2E_VARIANTS)
                + f" (default {perf_variants.E2E_DEFAULT})",
    "k8s-version": flag_help("k8s.version", after="; of the scheduler and API server"),
    "chart": "write the PNG bar chart here (default docs/benchmarks/e2e-throughput.png)",
    "node": "instead: on a real node (inv cluster.up --node, root), the example spec deployed by inv deploy: "
            "its scheduler pod vs the same binary as a host process, same config and pods (needs no other node "
            "cluster running; --variants, --k8s-version and --chart do not apply)",
    "qps": "with --node: client QPS and burst of both schedulers, set in the deployed ConfigMap too "
           "(default: the spec's clientConnection)",
    "json": "print raw figures as JSON instead of a Markdown table",
    "trace": "also record per variant: CPU seconds of each process, load average, the extender's metrics, py-spy",
})
@user_errors
def e2e_bench(c, pods=1000, nodes=500, repeats=1, variants=perf_variants.E2E_DEFAULT, k8s_version=None, chart=None, node=False,
              qps=0, json=False, trace=False):
    """Pods/s on a real control plane: in-tree vs example plugin vs Python extender (NodeNames, NodeList)."""
    if int(qps) and not node:
        raise UserError("--qps applies to --node only", "add --node, or leave --qps out (bench.e2e uses QPS 5000)")
    if int(qps) < 0:
        raise UserError(f"--qps {qps}: must be positive", "e.g. --qps 5000")
    if node:
        module = _bench_module("node_bench")
        _report("bench.e2e.node", module, lambda: module.run(int(pods), int(nodes), int(repeats), int(qps)), json)
        return
    letters = "".join(v.name for v in perf_variants.E2E_VARIANTS)
    bad = sorted(set(variants) - set(letters))
    if bad or not variants:
        raise UserError(f"--variants {variants!r}: unknown {''.join(bad) or 'empty'}", f"use letters of {letters}, e.g. --variants ac")
    module = _bench_module("e2e_bench")
    png_path = Path(chart) if chart else BENCH_DIR.parent / "docs" / "benchmarks" / "e2e-throughput.png"

    def measured() -> dict:
        results = module.run(int(pods), int(nodes), int(repeats), variants, option(c, "k8s.version", k8s_version),
                             trace=bool(trace))
        results["chart"] = str(module.chart(results, png_path))
        return results

    _report("bench.e2e", module, measured, json)


@task(name="startup", help={
    "repeats": "alternating runs per side (default 15)",
    "json": "print raw figures as JSON instead of a Markdown table",
})
@user_errors
def startup_bench(c, repeats=15, json=False):
    """Start-up of scheduler-build (--version, --list, completion) vs `python -c 'import invoke'`."""
    module = _bench_module("startup_bench")
    _report("bench.startup", module, lambda: module.run(int(repeats)), json)



@task(name="perf", help={
    "spec": flag_help("spec.path", after="; its build is measured"),
    "workloads": "comma-separated upstream workload names of SchedulingBasic, or Case/Workload (default 500Nodes)",
    "variants": perf_variants.help_text(),
    "repeats": "interleaved runs per variant and workload; medians with min and max are reported (default 3)",
    "json": "write the raw file here instead of bench/results/bench-perf-<time>.json (command, commit, "
            "machine, load, every run, the summary)",
    "chart": "also write a PNG bar chart (median, min-max) here",
    "pgo-profile": "the CPU profile (pprof) the *-pgo variants' harness is compiled with: take it from another "
                   "run than the one measured; its sha256 goes in the raw file",
    "compare": "a previous --json (or raw) file: fail when a variant's ratio to vanilla fell by more than --threshold",
    "threshold": "with --compare: the fraction a ratio may fall before it is a regression (default 0.1)",
    "profile": "keep each run's CPU profile (pprof) and its SVG beside the raw file (<raw>.profiles/), merged "
               "per variant, and report each plugin's share of scheduling CPU (docs/bench-perf.md)",
    "shard": "I/N: run only the I-th of N shares of the cells (whole repeats of a workload, its variants "
             "interleaved) and write a partial raw file naming its shard; join the N with bench.merge",
    "on": "KUBECONFIG: run the shards as one Kubernetes Indexed Job on that cluster (docs/bench-perf.md)",
    "parallel": "with --on: the shards (completions = parallelism of the Job; default 2)",
    "render-only": "with --parallel: build and push the harness image, write the Job's manifests into this "
                   "directory, apply nothing",
    "keep": "with --on: keep the finished Job and its pods (deleted otherwise; always deleted on Ctrl-C/SIGTERM)",
    "registry": flag_help("registry.url", spec="image.repository (when it names a registry host)",
                          before="with --on: the harness image goes to REPO/perf-harness of ", after=""),
    "namespace": "with --on: the Job's namespace (default default)",
    "cpus": "with --on: whole CPUs per shard, request = limit (default 2)",
    "memory": "with --on: memory per shard, request = limit (default 4Gi)",
    "timeout": "with --on: seconds the Job may run before it is deleted (default 7200)",
})
@user_errors
def perf_bench(c, spec=None, workloads="500Nodes", variants=perf_variants.DEFAULT_VARIANTS, repeats=3, json=None,
               chart=None, compare=None, threshold="0.1", pgo_profile=None, profile=False, shard=None, on=None,
               parallel=None, render_only=None, keep=False, registry=None, namespace="default", cpus=2, memory="4Gi",
               timeout=7200):
    """Upstream's scheduler_perf against the spec's build: vanilla vs the spec's plugins vs its extender."""
    from bench.perf import results as perf_results
    from bench.perf import report as perf_report
    from bench.perf import run as perf_run
    from bench.perf import shards as perf_shards
    from scheduler_build import settings
    from scheduler_build.inputs.common import spec_at
    from scheduler_build.build import pgo

    if int(repeats) < 1:
        raise UserError(f"--repeats {repeats}: must be at least 1", "e.g. --repeats 3")
    share = perf_shards.parse(shard) if shard else None
    if share is not None and compare:
        raise UserError("--compare with --shard: a shard holds part of the cells", "merge the shards (bench.merge), "
                        "then compare the merged file with `inv bench.perf --compare` on a whole run")
    reference, threshold = _reference(compare, threshold)
    loaded = spec_at(Path(spec or option(c, "spec.path")))
    chosen = perf_variants.parse_variants(variants)
    if on or render_only or parallel is not None:
        _perf_on(c, loaded, workloads, chosen, int(repeats), json, *_cluster_inputs(
            c, loaded, on, parallel, render_only, keep, registry, namespace, cpus, memory, timeout,
            local_only=bool(shard or compare or profile or pgo_profile or chart)))
        return
    pgo_loaded = pgo.load(pgo_profile, "--pgo-profile") if pgo_profile else None
    perf_variants.check_pgo(chosen, pgo_loaded)

    def measured() -> dict:
        raw_path = record.raw_path()
        results = perf_run.run(loaded, perf_variants.parse_workloads(workloads), chosen,
                               int(repeats), settings.cache_dir(c.config),
                               settings.gocache_volume(option(c, "build.gocache_volume")),
                               option(c, "builder.image"), option(c, "builder.pull"), pgo_loaded,
                               profiles=raw_path.with_suffix(".profiles") if profile and raw_path else None,
                               shard=share)
        if chart:
            results["chart"] = str(perf_report.chart(results, Path(chart)))
        return results

    target = Path(json).resolve() if json else None
    head = {"shard": share.as_dict(), "partial": True} if share else None  # a shard is never the whole run
    results, raw = record.measure("bench.perf", measured, checkpoint=target or True, head=head)  # minutes per run
    log(f"raw file: {record.write(raw, target)}")
    if share:
        emit(f"shard {share} of the cells only (partial): join the {share.count} shards with `inv bench.merge`")
    emit(perf_report.markdown(results))
    if reference is not None:
        found = perf_results.regressions(results, reference, threshold)
        if found:
            emit("\n".join(f"REGRESSION {line}" for line in found))
            raise UserError(f"{len(found)} regression(s) against {compare}", "see the REGRESSION lines above")
        emit(f"no regression beyond {threshold * 100:.0f}% against {compare}")


def _reference(compare, threshold) -> tuple[dict | None, float]:
    """--compare's reference figures (a raw file or figures) and --threshold, checked."""
    from scheduler_build.safeyaml import load_json

    try:
        threshold = float(threshold)
    except ValueError:
        threshold = -1.0
    if not 0 < threshold < 1:
        raise UserError(f"--threshold {threshold}: must be a fraction between 0 and 1", "e.g. --threshold 0.1 (10%)")
    if not compare:
        return None, threshold
    if not Path(compare).is_file():
        raise UserError(f"--compare {compare}: no such file", "pass a file an earlier `inv bench.perf --json FILE` wrote")
    reference = load_json(Path(compare).read_bytes())
    return (reference.get("results", reference) if isinstance(reference, dict) else {}), threshold


def _cluster_inputs(c, loaded, on, parallel, render_only, keep, registry, namespace, cpus, memory, timeout,
                    local_only=False):
    """bench.perf --on's decided inputs: the kubeconfig read and checked, the registry and its access, the counts.
    local_only: a flag of a local run was given too (--shard, --compare, --profile, --pgo-profile, --chart)."""
    from bench.perf import job as perf_job
    from bench.perf import on_cluster
    from bench.perf import shard_plan
    from scheduler_build import kubeclient
    from scheduler_build.inputs import publish as publish_inputs
    from scheduler_build.publish import distribution

    if local_only:
        raise UserError("--on/--parallel/--render-only take no --shard, --compare, --profile, --pgo-profile or "
                        "--chart", "the Job makes the shards; compare or chart the merged raw file afterwards")
    if not on and not render_only:
        raise UserError("--parallel needs --on KUBECONFIG (or --render-only DIR)", "e.g. --on ~/.kube/config --parallel 2")
    if on:
        kubeclient.check_kubeconfig(Path(on), "--on")
    try:
        count, whole, seconds = int(2 if parallel is None else parallel), int(cpus), float(timeout)
    except ValueError:
        raise UserError(f"--parallel {parallel} / --cpus {cpus} / --timeout {timeout}: numbers", "e.g. --parallel 2") from None
    target = publish_inputs.push_target(c, registry, loaded)
    target = distribution.Target(target.host, f"{target.repository}/perf-harness")
    access = publish_inputs.registry_inputs(c, target)
    inputs = on_cluster.ClusterInputs(Path(on) if on else Path(), count, namespace, whole, str(memory),
                                      Path(render_only).resolve() if render_only else None, bool(keep), seconds)
    perf_job.check(perf_job.JobPlan("x", namespace, "x@sha256:" + "0" * 64, count, whole, str(memory), "", "", 1))
    return inputs, access, shard_plan


def _perf_on(c, loaded, workloads, chosen, repeats, json, inputs, access, shard_plan):
    """bench.perf --on: the Job's merged raw file (or, with --render-only, its manifests)."""
    from bench.perf import harness_image, on_cluster
    from bench.perf import report as perf_report
    from scheduler_build import settings
    from scheduler_build.flows import publishers

    shard_plan.on_cluster_variants(chosen)
    import time

    target = Path(json).resolve() if json else record.default_path("bench.perf", time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                               time.gmtime()))
    raw = on_cluster.run_on(loaded, perf_variants.parse_workloads(workloads), chosen, repeats, inputs,
                            lambda built: harness_image.push(built, publishers.client(access)),
                            settings.cache_dir(c.config), settings.gocache_volume(option(c, "build.gocache_volume")),
                            option(c, "builder.image"), option(c, "builder.pull"), record.command_line(sys.argv), target)
    if raw is None:
        return
    log(f"raw file: {record.write(raw, target)} ({inputs.parallel} shards, one Indexed Job)")
    emit(perf_report.markdown(raw["results"]))


@task(name="merge", help={
    "files": "the shards' raw files (bench.perf --shard I/N --json FILE): comma-separated, or a quoted glob",
    "out": "write the merged raw file here (default bench/results/bench-perf-<earliest shard's start>.json)",
})
@user_errors
def merge_bench(c, files, out=None):
    """Join the raw files of a sharded bench.perf run into the whole run's; refuse shards that do not fit."""
    from bench.perf import merge as perf_merge
    from bench.perf import report as perf_report

    names = perf_merge.expand(files)
    raw = perf_merge.merge([(name, perf_merge.load(Path(name))) for name in names], record.command_line(sys.argv))
    log(f"raw file: {record.write(raw, Path(out).resolve() if out else None)} ({len(names)} shards)")
    emit(perf_report.markdown(raw["results"]))


@task(name="compare", help={
    "spec": "the spec compared against itself (default examples/underlay/scheduler.yaml)",
    "nodes": "nodes of the generated snapshot (default 1000)",
    "pods": "pods of the generated snapshot (default 5000)",
    "pod-label": "KEY=VALUE[:FRACTION] for snapshot.generate (default the example's opt-in label on a third)",
    "repeats": "runs (default 1: each is minutes)",
    "apiserver": "a kube-apiserver binary (default: compare builds its own)",
    "json": "print raw figures as JSON instead of a Markdown table",
})
@user_errors
def compare_bench(c, spec="examples/underlay/scheduler.yaml", nodes=1000, pods=5000,
                  pod_label="underlay.acme.example.com/needs-ip=true:0.33", repeats=1, apiserver="", json=False):
    """`compare` at scale: seconds per side, pods/s and the schedulers' peak memory (docs/compare.md)."""
    module = _bench_module("compare_bench")
    _report("bench.compare", module, lambda: module.run(spec, int(nodes), int(pods), pod_label, int(repeats), apiserver),
            json, checkpoint=True)


@task(name="report", help={
    "check": "write nothing; fail when BENCHMARKS.md differs from what the raw files say",
})
@user_errors
def report_bench(c, check=False):
    """Render BENCHMARKS.md from the raw files bench/rows.json lists (bench/results/)."""
    from bench import report

    if check:
        report.check()
        emit("BENCHMARKS.md matches its raw files")
        return
    write_atomic(report.REPO / report.OUTPUT, report.render())
    log("wrote BENCHMARKS.md")


ns = Collection("bench", build_bench, extender_bench, image_bench, e2e_bench, perf_bench, merge_bench, startup_bench,
                compare_bench,
                report_bench)
