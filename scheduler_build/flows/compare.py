"""`compare`'s conductor: build each side (its compare build, through the normal cache), run it on its
own fresh control plane, one after the other, then the report (compare/report.py) as text, JSON and PNG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from scheduler_build import safeyaml, signals
from scheduler_build.atomic import write_atomic
from scheduler_build.build import pipeline as build_stage
from scheduler_build.compare import chart, report, side as side_mod, sideconfig
from scheduler_build.config import schedulerconfig
from scheduler_build.dev import loop as devloop
from scheduler_build.errors import UserError
from scheduler_build.inputs.compare import CompareInputs, SideInputs, new_workdir
from scheduler_build.progress import log
from scheduler_build.spec.model import reference_extender_url

TIE_BREAKING = "by node name (compare builds; docs/compare.md)"


def _binaries(side: SideInputs) -> tuple[Path, Path]:
    """(kube-scheduler, kube-apiserver) of a side, built as needed."""
    if side.request is not None:
        log(f"==> side {side.label}: compare build of {side.source}")
        scheduler = build_stage.run(side.request).binary
    else:
        assert side.binary is not None
        scheduler = side.binary
    if side.apiserver_binary is not None:
        return scheduler, side.apiserver_binary
    if side.apiserver is None:
        raise UserError(f"side {side.label}: no kube-apiserver for {side.source}",
                        "pass --apiserver BINARY, or put the binary's build-info.json beside it")
    log(f"==> side {side.label}: kube-apiserver {side.apiserver.k8s_version}")
    return scheduler, build_stage.run(side.apiserver).binary


def _config(side: SideInputs) -> tuple[dict, str]:
    if side.spec is not None:
        spec = devloop.host_spec(side.spec)
        url = reference_extender_url(spec) if spec.reference_extender.enabled else ""
        return sideconfig.side_config(schedulerconfig.for_spec(spec), label=side.label, profile=side.profile,
                                      reference_url=url)
    assert side.config_file is not None
    loaded = sideconfig.from_file(safeyaml.load_yaml(safeyaml.read_text(side.config_file)), str(side.config_file),
                                  side.label)
    return sideconfig.side_config(loaded, label=side.label, profile=side.profile)


def run(inputs: CompareInputs, emit: Callable[[str], None]) -> dict:
    signals.install()  # SIGTERM/SIGHUP take Ctrl-C's path: every side's finally runs
    configs = {s.label: _config(s) for s in (inputs.a, inputs.b)}  # a bad configuration before any build
    built = {s.label: _binaries(s) for s in (inputs.a, inputs.b)}
    results = {}
    for s in (inputs.a, inputs.b):
        config, name = configs[s.label]
        scheduler, apiserver = built[s.label]
        run_spec = side_mod.SideRun(label=s.label, binary=scheduler, config=config, scheduler_name=name,
                                    apiserver=apiserver, etcd=inputs.etcd, workdir=new_workdir(inputs.work_root, s.label),
                                    timeout=inputs.timeout, reference_extender=sideconfig.uses_extender(config))
        results[s.label] = side_mod.run_side(run_spec, inputs.snapshot, inputs.pending_only)
    doc = report.build(inputs.snapshot, results["a"], results["b"], snapshot_path=str(inputs.snapshot_path),
                       sources=(inputs.a.source, inputs.b.source), pending_only=inputs.pending_only,
                       tie_breaking=TIE_BREAKING)
    if inputs.json_out is not None:
        write_atomic(inputs.json_out, json.dumps(doc, indent=1) + "\n")
    if inputs.chart_out is not None:
        chart.write(inputs.chart_out, inputs.snapshot, doc)
    emit(report.text(doc).rstrip("\n"))
    return doc
