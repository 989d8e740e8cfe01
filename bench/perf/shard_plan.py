"""bench.perf on a cluster: what each shard's pod runs, and its raw file from what the pod printed. Pure.

The harness image is FROM scratch (no Python), so the Python a local run does around each harness process
is split in two. Before: the caller plans every shard's cells (`plan`): the harness argv of each, with the
derived workload and scheduler configuration files it reads (made by the code a local run uses: variants.py,
run.harness_argv), baked into the image under /perf/. The image's runner (runner/main.go) runs its shard's
cells in order and prints, for each, the harness's exit code, its scheduler_perf JSON and the log lines
that judge it, as one marked JSON block at the end of the pod's log. After: the caller reads that block
back from the pod's log (`parse_block`) and makes the shard's raw file (`shard_raw`) with the functions a
local run uses (results.parse_items, run.batching_state, run.below_threshold, cells.assemble), so
bench.merge takes it as it takes a `--shard I/N` file.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from pathlib import Path

from bench.perf import cells, harness, results, run, shards, variants
from scheduler_build.config.render import dump
from scheduler_build.errors import UserError
from scheduler_build.spec import Spec

BEGIN = "===== scheduler-build perf shard BEGIN ====="  # runner/main.go prints these two lines
END = "===== scheduler-build perf shard END ====="
CHUNK = "perf-shard-chunk"  # each line of the block: CHUNK K/N <base64 piece>; END carries sha256=<hex>
BINARY = "/usr/local/bin/perf.test"
TEST_SRCDIR, TEST_WORKSPACE = "/k8s", "ws"  # run.source_root's layout, inside the image
CELLS = "/perf/cells"  # the planned configuration files, read-only
RUNS = "/tmp/runs"  # each run's working directory (the emptyDir)


def module_root(kubernetes: str) -> str:
    """Where the image holds the parts of k8s.io/kubernetes the harness reads (run.source_root's path)."""
    return f"{TEST_SRCDIR}/{TEST_WORKSPACE}/k8s.io/kubernetes@{kubernetes}"


def on_cluster_variants(chosen: list[str]) -> None:
    """The variants an image can run: those of the plain harness without the Python extender."""
    bad = [v for v in chosen if variants.BY_NAME[v].harness_key != (variants.PLAIN, False)
           or variants.BY_NAME[v].config == variants.EXTENDER]
    if bad:
        raise UserError(f"--variants {','.join(bad)}: not with --on (the harness image runs the plain harness only, "
                        "and has no Python for the reference extender)",
                        "run these locally, or use --variants vanilla,vanilla-nobatch,spec with --on")


def _gate(spec: Spec, variant: str, has_gate: bool) -> bool | None:
    row_gate = dict(variants.BY_NAME[variant].gates).get(variants.GATE, True)
    return (row_gate and spec.feature_gates.get(variants.GATE, True)) if has_gate else None


def _cell(h: harness.Harness, spec: Spec, w: variants.Workload, variant: str, rep: int, config_text: str,
          config_path: str, has_gate: bool, files: dict[str, bytes]) -> dict:
    """One run's entry in the plan (argv, and the ungated fallback run._one makes); its files into `files`."""
    name = f"{w.label.replace('/', '_')}-{variant}-{rep}"
    ours, work = f"{CELLS}/{name}", Path(f"{RUNS}/{name}")
    image_h = dataclasses.replace(h, binary=Path(BINARY))
    row = variants.BY_NAME[variant]
    scheduler_config = None
    if row.config == variants.SPEC:
        scheduler_config = Path(f"{ours}/scheduler-config.yaml")
        files[str(scheduler_config)] = dump(variants.spec_config(spec)).encode()
    names = h.plugin_names if row.plugins else ()
    gate = _gate(spec, variant, has_gate)
    others = {n: on for n, on in spec.feature_gates.items() if n != variants.GATE}
    plain = config_path
    if others:
        plain = f"{ours}/workloads-ungated.yaml"
        files[plain] = dump(variants.gated_cases(config_text, w, None, others)).encode()
    fallback = None
    if gate is None:
        argv = run.harness_argv(image_h, w, work, Path(plain), scheduler_config, names, None, "")
    else:
        files[f"{ours}/workloads.yaml"] = dump(variants.gated_cases(config_text, w, gate, spec.feature_gates)).encode()
        argv = run.harness_argv(image_h, w, work, Path(f"{ours}/workloads.yaml"), scheduler_config, names, None, "")
        fallback = run.harness_argv(image_h, w, Path(f"{RUNS}/{name}-ungated"), Path(plain), scheduler_config, names,
                                    None, "")
    return {"repeat": rep, "workload": w.label, "variant": variant, "name": name, "argv": argv, "fallback": fallback,
            "gate": gate}


def plan(h: harness.Harness, spec: Spec, workloads: list[variants.Workload], configs: dict[str, tuple[str, str]],
         chosen: list[str], repeats: int, count: int, has_gate: bool, args: dict) -> tuple[dict, dict[str, bytes]]:
    """(the runner's plan, the files it names): every shard's cells in the order a local `--shard I/N` makes them.
    configs: workload label -> (its workload file's text, its path in the image); args: the Job's runner flags."""
    files: dict[str, bytes] = {}
    by_label = {w.label: w for w in workloads}
    labels = [w.label for w in workloads]
    planned: dict[str, list] = {}
    for index in range(1, count + 1):
        groups = shards.share(shards.Shard(index, count), repeats, labels)
        planned[str(index)] = [_cell(h, spec, by_label[lb], v, rep, configs[lb][0], configs[lb][1], has_gate, files)
                               for rep, lb in groups for v in chosen]
    root = module_root(h.kubernetes)
    body = {"count": count, "workloads": args["workloads"], "variants": args["variants"], "repeats": args["repeats"],
            "cwd": f"{root}/{harness.UPSTREAM_DIR}/misc", "unsettable": run.UNSETTABLE, "runs": RUNS,
            "env": {"PATH": "/usr/local/bin", "TEST_SRCDIR": TEST_SRCDIR, "TEST_WORKSPACE": TEST_WORKSPACE},
            "shards": planned}
    return body, files


def parse_block(log_text: str, where: str) -> dict:
    """The runner's block from a pod's log (the last one: a retried container prints its own).

    Lines between the markers that are not chunks are the pod's stderr, which the kubelet interleaves."""
    start = log_text.rfind(BEGIN)
    stop = log_text.find(END, start) if start >= 0 else -1
    if start < 0 or stop < 0:
        tail = [ln for ln in log_text.splitlines() if ln.strip()][-1:] or ["an empty log"]
        raise UserError(f"{where}: its log has no shard block (the runner did not finish): {tail[0][:200]}",
                        "see the pod's log; the shard is missing from the merge")
    block = json.loads(_joined(log_text[start + len(BEGIN):stop], log_text[stop:].split("\n", 1)[0], where))
    if not isinstance(block, dict) or not isinstance(block.get("runs"), list):
        raise UserError(f"{where}: the shard block has no runs list", "an image of another version: rebuild it")
    return block


def _joined(between: str, end_line: str, where: str) -> bytes:
    """The block's bytes from its numbered chunks, checked against the digest on its END line."""
    pieces: dict[int, str] = {}
    total = set()
    for line in between.splitlines():
        m = re.fullmatch(rf"{CHUNK} (\d+)/(\d+) ([A-Za-z0-9+/=]+)", line.strip())
        if m:
            pieces[int(m[1])] = m[3]
            total.add(int(m[2]))
    digest = re.search(r"sha256=([0-9a-f]{64})", end_line)
    if len(total) != 1 or digest is None:
        raise UserError(f"{where}: the shard block has no numbered chunks and digest",
                        "an image of another version: rebuild it (bench.perf --on builds it)")
    n = total.pop()
    missing = [k for k in range(1, n + 1) if k not in pieces]
    if missing:
        raise UserError(f"{where}: the shard block is cut (chunk {missing[0]} of {n} missing)",
                        "the log was cut: run the shard again")
    try:
        data = base64.b64decode("".join(pieces[k] for k in range(1, n + 1)), validate=True)
    except ValueError:  # a chunk cut inside its line is no longer whole base64: the digest check refuses it
        data = b""
    if hashlib.sha256(data).hexdigest() != digest[1]:
        raise UserError(f"{where}: the shard block is cut (its digest does not match)",
                        "the log was cut: run the shard again")
    return data


def _judged(r: dict, cell: dict, where: str) -> tuple[results.RunFigures, str]:
    """A run's figures and batching state, judged as run._run judges a local run."""
    log_text = "\n".join(r.get("log") or [])
    what = f"{where}: scheduler_perf {r.get('workload')} ({r.get('variant')})"
    items = r.get("items")
    below = r.get("exit") != 0 and items is not None and run.below_threshold(log_text)
    if (r.get("exit") != 0 and not below) or items is None:
        lines = [ln.strip() for ln in log_text.splitlines() if ln.strip()] or ["no output"]
        raise UserError(f"{what} failed (exit {r.get('exit')}): {lines[-1][:300]}", "see the pod's log")
    if r.get("ungated"):
        state = run.batching_state(log_text, None, "the workload emulates a release without the gate")
    else:
        state = run.batching_state(log_text, cell["gate"], "no such gate in this release")
    return results.parse_items(items, what), state


def shard_raw(block: dict, body: dict, head: dict, meta: dict, plugin_names: tuple[str, ...], where: str) -> dict:
    """The raw file a local `bench.perf --shard I/N` run would write, from its pod's block.
    head: schema, task, command, commit, started, machine (as record.measure has them); meta: run.run's meta."""
    shard = shards.parse(str(block.get("shard")), f"{where}: shard")
    planned = body["shards"][str(shard.index)]
    got = [(r.get("repeat"), r.get("workload"), r.get("variant")) for r in block["runs"]]
    want = [(c["repeat"], c["workload"], c["variant"]) for c in planned]
    if got != want:
        raise UserError(f"{where}: shard {shard} ran {len(got)} of its {len(want)} planned cells",
                        "a shard cut short is missing from the merge: run it again")
    found = cells.empty(list(meta["workloads"]), list(meta["variants"]))
    runs, clock = [], 0.0
    for r, cell in zip(block["runs"], planned):
        figures, state = _judged(r, cell, where)
        cells.add(found, cell["workload"], cell["variant"], cell["repeat"], figures, state, {})
        clock += float(r.get("seconds") or 0.0)
        runs.append({"measure": cell["workload"], "side": cell["variant"], "seconds": round(figures.duration_s, 6),
                     "ended_s": round(clock, 3), "load1": (block.get("load_after") or [0.0])[0],
                     "pods_per_second": round(figures.throughput.get("Average", 0.0), 3), "batching": state,
                     "repeat": cell["repeat"]})
    loads = {k: [float(x) for x in (block.get(k) or [0, 0, 0])][:3] for k in ("load_before", "load_after")}
    results_ = cells.assemble(dict(meta, shard=shard.as_dict()), found, plugin_names)
    return dict(head, **loads, runs=runs, results=results_, shard=shard.as_dict(), partial=True)
