"""`inv bench.perf`: upstream's scheduler_perf, in three variants, repeated and interleaved.

Each (repeat, workload, variant) is one run of the compiled harness (harness.py), in its own
directory under <cache>/perf-runs/<stamp>/ (the harness's log, JSON, derived files), with etcd
at the target's pinned version first on PATH (etcd.py) and the working directory upstream's
misc/ in the module, so upstream's performance-config.yaml and templates are read in place.
Repeats are interleaved (vanilla, spec, extender, vanilla, ...) so a load change on the
machine spreads over the variants instead of landing on one. The debuggable variant runs its own
harness binary (harness.py); every other variant runs the same one. Each run is also logged in the
raw file (bench/record.py: measure = workload, side = variant, seconds = its scheduling duration).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import record
from bench.perf import cells, harness, report, results, shards, variants
from bench.perf import profile as cpu
from testkit import etcd
from scheduler_build.build import pgo as pgo_mod
from scheduler_build.cluster.processes import free_port
from scheduler_build.config import batching
from scheduler_build.config.render import dump
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase
from scheduler_build.resolve import vocabulary
from scheduler_build.safeyaml import load_json, load_yaml
from scheduler_build.spec import Spec

REPO = Path(__file__).resolve().parents[2]
THRESHOLD_MISS = 'expected "SchedulingThroughput" "Average" to be higher'
RUN_TIMEOUT = 3600.0  # seconds per run: 5000 nodes on a loaded 2-core machine takes minutes


def _extender_args(port: int) -> list[str]:
    """The reference extender on 127.0.0.1:port; the prepare hook sets KUBECONFIG to the harness's API server."""
    return [sys.executable, "-m", "scheduler_build.extender", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning"]


def harness_argv(h: harness.Harness, w: variants.Workload, work: Path, config: Path, scheduler_config: Path | None,
                 plugin_names: tuple[str, ...], prepare: list[str] | None, ready_url: str,
                 cpuprofile: Path | None = None) -> list[str]:
    """One run's command line (pure). An empty label filter: upstream's 500Nodes carries no label.
    The debuggable harness also writes the recorded pods' annotation sizes (record_sizes)."""
    argv = [str(h.binary), "-test.run=^$", f"-test.bench={w.bench_pattern()}", "-test.benchtime=1ns",
            "-perf-scheduling-label-filter=", f"-data-items-dir={work}", f"-sb-work-dir={work}", f"-sb-config={config}"]
    if scheduler_config is not None:
        argv.append(f"-sb-scheduler-config={scheduler_config}")
    if plugin_names:
        argv.append(f"-sb-plugin-names={json.dumps(list(plugin_names))}")
    if prepare:
        argv += [f"-sb-prepare={json.dumps(prepare)}", f"-sb-ready-url={ready_url}"]
    if h.debuggable:
        argv.append(f"-sb-record-sizes={work / RECORD_SIZES}")
    if cpuprofile is not None:  # the test binary's own profiler: the whole run, API server included
        argv.append(f"-test.cpuprofile={cpuprofile}")
    return argv


RECORD_SIZES = "record-sizes.json"


def record_sizes(path: Path) -> dict:
    """The debuggable harness's annotation sizes (bytes of the recorder's keys and values per recorded pod):
    how many pods it recorded of how many, median and max; empty when the file is missing (pure but the read)."""
    if not path.is_file():
        return {}
    data = load_json(path.read_bytes())
    sizes = [int(x) for x in data.get("recorded_bytes") or []]
    return {"pods": int(data.get("pods", 0)), "recorded_pods": len(sizes),
            "annotation_bytes_median": statistics.median(sizes) if sizes else 0, "annotation_bytes_max": max(sizes, default=0)}


def source_root(h: harness.Harness, root: Path) -> dict[str, str]:
    """TEST_SRCDIR/TEST_WORKSPACE for a -trimpath binary: the API server's test fixture directory is
    found from its source file's path, which -trimpath makes `k8s.io/kubernetes@vX/...`; upstream
    joins these two variables in front of it (its bazel path), so they point at the tree it came from."""
    link = root / "ws" / f"k8s.io/kubernetes@{h.kubernetes}"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(h.module_dir, target_is_directory=True)
    return {"TEST_SRCDIR": str(root), "TEST_WORKSPACE": "ws"}


UNSETTABLE = "cannot set feature gate " + variants.GATE  # the workload emulates a release without the gate


def batching_state(log_text: str, gate: bool | None, why_none: str = "no such gate in this release") -> str:
    """Whether the run's scheduler batched: the gate as set, then what the scheduler itself logged (pure)."""
    if gate is None:
        return f"off ({why_none})"
    if not gate:
        return f"off ({variants.GATE} gate off)"
    said = batching.parse_output(log_text).get(variants.HARNESS_SCHEDULER)
    if said is None:
        return "on"
    verdict = batching.ProfileBatching(variants.HARNESS_SCHEDULER, extenders=("extender",) if said.extenders else (),
                                       unsigned=tuple(sorted(said.unsigned)))
    return f"off ({verdict.why()})"


def _one(h: harness.Harness, etcd_bin: Path, spec: Spec, w: variants.Workload, variant: str, work: Path,
         config: Path, has_gate: bool, cpuprofile: Path | None = None) -> tuple[results.RunFigures, str, dict]:
    """Run the harness once for one workload and variant; its figures from the JSON it wrote, its batching
    state, and what the debuggable harness recorded (record_sizes).

    Every variant names the gate (v1.36's harness turns it off otherwise). A workload that makes the harness
    emulate an older release (v1.36's SchedulerQueueingHints: false emulates 1.33) cannot have it: the harness
    says so at once, and the run is made again as upstream wrote it, batching off."""
    row_gate = dict(variants.BY_NAME[variant].gates).get(variants.GATE, True)  # vanilla-nobatch: off
    gate = (row_gate and spec.feature_gates.get(variants.GATE, True)) if has_gate else None
    if gate is not None:
        gated = work / "workloads.yaml"
        work.mkdir(parents=True)
        gated.write_text(dump(variants.gated_cases(config.read_text(), w, gate, spec.feature_gates)))
        try:
            return _run(h, etcd_bin, spec, w, variant, work, gated, gate, cpuprofile=cpuprofile)
        except UserError:
            log_file = work / "harness.log"
            if not log_file.is_file() or UNSETTABLE not in log_file.read_text(errors="replace"):
                raise
        log(f"    {w.label}: its workload emulates a release without {variants.GATE}; run as upstream wrote it")
        work = work.with_name(work.name + "-ungated")
    others = {name: on for name, on in spec.feature_gates.items() if name != variants.GATE}
    if others:  # the spec's own gates still apply
        work.mkdir(parents=True, exist_ok=True)
        (work / "workloads.yaml").write_text(dump(variants.gated_cases(config.read_text(), w, None, others)))
        config = work / "workloads.yaml"
    return _run(h, etcd_bin, spec, w, variant, work, config, None,
                "the workload emulates a release without the gate" if has_gate else "no such gate in this release",
                cpuprofile)


def _run(h: harness.Harness, etcd_bin: Path, spec: Spec, w: variants.Workload, variant: str, work: Path,
         config: Path, gate: bool | None, why_none: str = "",
         cpuprofile: Path | None = None) -> tuple[results.RunFigures, str, dict]:
    work.mkdir(parents=True, exist_ok=True)
    scheduler_config, prepare, ready = None, None, ""
    row = variants.BY_NAME[variant]
    if row.config == variants.SPEC:
        scheduler_config = work / "scheduler-config.yaml"
        scheduler_config.write_text(dump(variants.spec_config(spec)))
    elif row.config == variants.EXTENDER:
        port = free_port()
        scheduler_config = work / "scheduler-config.yaml"
        scheduler_config.write_text(dump(variants.extender_config(spec, f"http://127.0.0.1:{port}")))
        prepare, ready = _extender_args(port), f"http://127.0.0.1:{port}/readyz"
    names = h.plugin_names if row.plugins else ()
    argv = harness_argv(h, w, work, config, scheduler_config, names, prepare, ready, cpuprofile)
    env = dict(os.environ, PATH=f"{etcd_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
               **source_root(h, work.parent / "src"))
    (work / "command.json").write_text(json.dumps(argv, indent=1))
    with open(work / "harness.log", "wb") as out:
        code = _run_harness(argv, h.misc_dir, env, out, f"{w.label} ({variant})", work / "harness.log")
    found = sorted(work.glob("BenchmarkPerfScheduling*.json"))
    below = code != 0 and bool(found) and below_threshold((work / "harness.log").read_text(errors="replace"))
    if (code != 0 and not below) or not found:
        raise UserError(f"scheduler_perf {w.label} ({variant}) failed (exit {code}): {_failure(work / 'harness.log')}",
                        f"the whole log: {work / 'harness.log'}")
    if below:
        log(f"    below upstream's threshold for {w.label} (upstream's CI hardware): the figures are kept")
    state = batching_state((work / "harness.log").read_text(errors="replace"), gate, why_none)
    return results.parse_file(found[-1]), state, record_sizes(work / RECORD_SIZES)


def _run_harness(argv: list[str], cwd: Path, env: dict[str, str], out, what: str, log_path: Path) -> int:
    """The harness in a session of its own: it starts etcd (and the extender) as its children, so a run
    stopped for any reason (its timeout, Ctrl-C, SIGTERM) ends the whole session, none left running.
    Its temporary files (etcd's data directory and socket, the test API server's certificates) go in a
    directory of the run's own, removed afterwards: a Go test killed by a signal removes none of them."""
    scratch = Path(tempfile.mkdtemp(prefix="sb-perf-"))  # short: etcd's unix socket path must fit 108 bytes
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env, TMPDIR=str(scratch)), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise UserError(f"{what} ran over {RUN_TIMEOUT:.0f}s", f"its log: {log_path}") from None
        finally:
            _end_session(proc)  # its children outlive it unless their session is ended too
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _end_session(proc: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()  # reap the leader: a zombie still counts as a member of its group
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
    proc.poll()


def below_threshold(log_text: str) -> bool:
    """The harness failed only because throughput missed the workload's upstream threshold (it still wrote
    its JSON): that is a figure to report here, not a failed run. Any other failure line makes it a failure."""
    failures = [ln for ln in log_text.splitlines() if "FATAL ERROR" in ln or "Error running workload" in ln]
    return THRESHOLD_MISS in log_text and not failures


def _failure(log_path: Path) -> str:
    lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
    wanted = [ln.strip() for ln in lines if "Fatal" in ln or "Error" in ln or "FAIL" in ln or "failed" in ln]
    return (wanted or lines or ["no output"])[-1][:300]


def _labelled_config(h: harness.Harness, base: variants.Workload, labels: dict[str, str], out: Path) -> Path:
    """The opt-in copy of base's test case and its pod template, written under out/."""
    upstream = variants.misc_config(h.module_dir)
    case = next(c for c in load_yaml(upstream.read_text()) if c.get("name") == base.case)
    pod_source = (h.misc_dir / case.get("defaultPodTemplatePath", "")).resolve()
    if not case.get("defaultPodTemplatePath") or not pod_source.is_file():
        raise UserError(f"{upstream}: test case {base.case} has no default pod template to label",
                        "name a SchedulingBasic workload first in --workloads")
    out.mkdir(parents=True)
    cases, pod = variants.labelled_files(upstream.read_text(), pod_source.read_text(), base.case, labels, out / "pod.yaml")
    (out / "pod.yaml").write_text(dump(pod))
    (out / "performance-config.yaml").write_text(dump(cases))
    return out / "performance-config.yaml"


def machine() -> dict:
    load = os.getloadavg()
    return {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in load], "uptime": _uptime()}


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return ""


def _with_labelled(h: harness.Harness, workloads: list[variants.Workload], labels: dict[str, str], root: Path,
                   thresholds: dict) -> tuple[list[variants.Workload], dict[str, Path]]:
    """The workloads, each with its file: a <Case>Labelled one named in --workloads gets the opt-in copy of
    its case; without one, and with labels to set, the opt-in copy of the first is added."""
    upstream = variants.misc_config(h.module_dir)
    configs: dict[str, Path] = {}
    copies: dict[str, Path] = {}
    for w in workloads:
        if not (labels and w.case.endswith(variants.LABELLED)):
            configs[w.label] = upstream
            continue
        base = variants.Workload(w.case[:-len(variants.LABELLED)], w.name)
        if base.case not in copies:
            copies[base.case] = _labelled_config(h, base, labels, root / ("labelled" if not copies else f"labelled-{base.case}"))
        configs[w.label], thresholds[w.label] = copies[base.case], None
    if labels and not copies:
        extra = variants.labelled(workloads[0])
        configs[extra.label] = _labelled_config(h, workloads[0], labels, root / "labelled")
        thresholds[extra.label] = None
        log(f"    added {extra.label}: {workloads[0].label} with pods labelled {', '.join(sorted(labels))}, "
            "so the spec's plugin, the extender and the recorder act on them")
        workloads = [*workloads, extra]
    return workloads, configs


def plugin_packages(spec: Spec) -> dict[str, str]:
    """Each of the spec's plugins -> the Go package its functions are in (the profile's attribution)."""
    out: dict[str, str] = {}
    for source in spec.plugins:
        for r in source.register:
            out.setdefault(r.name, r.package)
        for name in source.names:
            out.setdefault(name, source.package)
    return out


def _profiled(path: Path, spec: Spec) -> dict:
    """One run's profile: its attribution to the spec's plugins (vanilla's too, where they are compiled in but
    not enabled: its 0% is the control) and its SVG call graph."""
    shares = cpu.summary(cpu.attribute(cpu.traces(path), plugin_packages(spec)))
    picture = cpu.svg(path, path.with_suffix(".svg"), cpu.focus_regexp())
    return dict(shares, file=record.shown(path), svg=record.shown(picture) if picture else "")


def runs_dir(cache_dir: Path) -> Path:
    """A fresh directory for one bench's runs, `<cache>/perf-runs/<stamp>-<random>/`: two benches started in the
    same second on one cache (a CI matrix's shards sharing it, act's host jobs) get one each."""
    base = Path(cache_dir) / "perf-runs"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-"), dir=base))


def _merged(found: dict, profiles: Path) -> dict[str, str]:
    """Per variant, its runs' profiles merged into one (`build --pgo` input)."""
    out = {}
    for variant in next(iter(found.values()), {}):
        files = sorted(profiles.glob(f"*-{variant}-[0-9]*.pprof"))
        if files:
            out[variant] = record.shown(cpu.merge(files, profiles / f"merged-{variant}.pprof"))
    return out


def _cells(harnesses: dict[str, harness.Harness], etcd_bin: Path, spec: Spec, groups: list[tuple[int, str]],
           workloads: list[variants.Workload], chosen: list[str], repeats: int, root: Path, configs: dict[str, Path],
           has_gate: bool, profiles: Path | None = None) -> dict:
    """Every (repeat, workload) group's runs, its variants interleaved (cells.py); `groups` are the ones this run
    (or its shard, shards.py) makes. With profiles (a directory): each run's CPU profile there, attributed."""
    by_label = {w.label: w for w in workloads}
    found = cells.empty([w.label for w in workloads], chosen)
    for rep, label in groups:
        w = by_label[label]
        for variant in chosen:
            name = f"{w.label.replace('/', '_')}-{variant}-{rep}"
            cpuprofile = profiles / f"{name}.pprof" if profiles else None
            with phase("run", f"{w.label} {variant} ({rep}/{repeats})"):
                figures, state, sizes = _one(harnesses[variant], etcd_bin, spec, w, variant, root / name,
                                             configs[w.label], has_gate, cpuprofile)
                shares = _profiled(cpuprofile, spec) if cpuprofile and cpuprofile.is_file() else {}
                cells.add(found, w.label, variant, rep, figures, state, sizes, shares)
                pods = figures.throughput.get("Average", 0.0)
                record.run(w.label, variant, figures.duration_s, pods_per_second=round(pods, 3), batching=state,
                           repeat=rep, **sizes, **({"profile": shares} if shares else {}))
                recorded = (f", {sizes['recorded_pods']} pods recorded, {sizes['annotation_bytes_median']:.0f} "
                            "bytes of annotations per pod (median)") if sizes else ""
                log(f"    {pods:.1f} pods/s, scheduling {figures.duration_s:.1f}s, batching {state}{recorded}")
                if shares:
                    log("  " + cpu.line(w.label, variant, shares))
    return found


def run(spec: Spec, workloads: list[variants.Workload], chosen: list[str], repeats: int, cache_dir: Path,
        gocache_volume: str, builder_image: str = "", pull: bool = True, pgo: pgo_mod.Profile | None = None,
        profiles: Path | None = None, shard: shards.Shard | None = None) -> dict:
    """Compile (cached), build etcd (cached), run every cell `repeats` times interleaved (or the share of
    the cells `shard` names, shards.py); the result dict. pgo: the profile the *-pgo variants' harness is
    compiled with (variants.check_pgo). profiles: a directory for each run's CPU profile (`--profile`),
    their SVGs and the merged ones."""
    labels = variants.pod_labels(spec, recorded=any(variants.BY_NAME[v].harness == variants.DEBUGGABLE for v in chosen))

    def known(module_dir: Path) -> dict:
        config_file = variants.misc_config(module_dir)
        return variants.check_known(workloads, config_file.read_text(), str(config_file), labelled_ok=bool(labels))

    adds_labelled = bool(labels) and not any(w.case.endswith(variants.LABELLED) for w in workloads)  # _with_labelled
    shards.share(shard, repeats, [w.label for w in workloads] + ["labelled"] * adds_labelled)  # refuse before compiling
    h = harness.prepare(spec, cache_dir, gocache_volume, builder_image, pull, check=known)
    rows = [variants.BY_NAME[v] for v in chosen]
    compiled = {(variants.PLAIN, False): h}
    for key in dict.fromkeys(r.harness_key for r in rows):
        if key not in compiled:
            compiled[key] = harness.prepare(spec, cache_dir, gocache_volume, builder_image, pull,
                                            debuggable=key[0] == variants.DEBUGGABLE, pgo=pgo if key[1] else None)
    harnesses = {r.name: compiled[r.harness_key] for r in rows}
    thresholds = known(h.module_dir)
    with phase("etcd", "at the version hack/lib/etcd.sh pins"):
        etcd_bin = etcd.binary(h.module_dir, cache_dir)
    root = runs_dir(cache_dir)
    workloads, configs = _with_labelled(h, workloads, labels, root, thresholds)
    has_gate = variants.GATE in vocabulary.feature_gates(h.kubernetes, cache_dir)
    before = machine()
    groups = shards.share(shard, repeats, [w.label for w in workloads])
    if shard is not None:
        log(f"shard {shard}: {len(groups)} of {repeats * len(workloads)} (repeat, workload) groups, "
            f"{len(groups) * len(chosen)} runs")
    if profiles:
        cpu.go_binary()  # said before minutes of runs, not after
        profiles.mkdir(parents=True, exist_ok=True)
    found = _cells(harnesses, etcd_bin, spec, groups, workloads, chosen, repeats, root, configs, has_gate, profiles)
    meta = {
        "spec": record.shown(spec.path), "spec_sha256": _sha256(spec.path), "kubernetes": h.kubernetes, "variants": chosen,
        "repeats": repeats, "workloads": [w.label for w in workloads], "thresholds": thresholds,
        "plugin_names": list(h.plugin_names),
        "harness": {"binary": str(h.binary), "key": h.binary.parent.name, "compiled": h.compiled,
                    "compile_seconds": h.compile_seconds},
        "harnesses": {v: {"binary": str(x.binary), "key": x.binary.parent.name, "compiled": x.compiled,
                          "compile_seconds": x.compile_seconds, **({"pgo_sha256": x.pgo_sha256} if x.pgo_sha256 else {})}
                      for v, x in harnesses.items()},
        **({"pgo_profile": pgo.to_dict()} if pgo and any(r.pgo for r in rows) else {}),
        "runs_dir": str(root), "machine_before": before, "machine_after": machine(),
        "profiles": ({"dir": record.shown(profiles), "merged": _merged(found, profiles)} if profiles else {}),
        "notes": report.notes(spec, labels, chosen),
    }
    if shard is not None:
        meta["shard"] = shard.as_dict()
    return cells.assemble(meta, found, h.plugin_names)


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
