"""scheduler_perf's JSON -> the figures bench.perf reports. Pure: no process, no file but the one read.

The harness writes `{"version": "v1", "dataItems": [{"data": {...}, "unit": ..., "labels":
{"Metric": ..., "Name": ...}}]}` per run. One run yields one `RunFigures`; a summary takes the
runs of every (workload, variant): medians, min and max, ratios of medians to `vanilla`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.perf.variants import BASELINE, BY_NAME
from scheduler_build.errors import UserError
from scheduler_build.safeyaml import load_json

THROUGHPUT = "SchedulingThroughput"
DURATION = "SchedulingDuration"
ATTEMPT = "scheduler_scheduling_attempt_duration_seconds"
PLUGIN = "scheduler_plugin_execution_duration_seconds"
EXTENSION_POINT = "scheduler_framework_extension_point_duration_seconds"


@dataclass
class RunFigures:
    throughput: dict[str, float]  # Average, Perc50, Perc90, Perc95, Perc99 (pods/s); empty when under 1 s
    duration_s: float = 0.0  # SchedulingDuration: the measured pods' scheduling, start to last
    attempt_ms: dict[str, float] = field(default_factory=dict)  # scheduled attempts: Perc50, Perc90, Perc99, Average
    plugins_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # "Plugin/ExtensionPoint" -> Perc50, Perc99, ...
    extension_points_ms: dict[str, dict[str, float]] = field(default_factory=dict)


def _ms(item: dict) -> dict[str, float]:
    """Durations in milliseconds whatever unit the item names (the harness writes ms)."""
    scale = {"s": 1000.0, "ms": 1.0, "us": 0.001}.get(str(item.get("unit", "ms")), 1.0)
    return {k: float(v) * scale for k, v in (item.get("data") or {}).items()}


def parse_items(data: Any, source: str = "harness JSON") -> RunFigures:
    """One run's figures from the harness's data items; a UserError when it measured no throughput."""
    items = data.get("dataItems") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise UserError(f"{source}: no dataItems list", "pass the JSON scheduler_perf wrote (-data-items-dir)")
    figures = RunFigures(throughput={})
    for item in items:
        labels = item.get("labels") or {}
        metric = labels.get("Metric", "")
        if metric == THROUGHPUT:
            figures.throughput = {k: float(v) for k, v in (item.get("data") or {}).items()}
        elif metric == DURATION:
            figures.duration_s = float((item.get("data") or {}).get("Duration", 0.0))
        elif metric == ATTEMPT and labels.get("result") == "scheduled":
            figures.attempt_ms = _ms(item)
        elif metric == PLUGIN and labels.get("plugin") and labels.get("extension_point"):
            figures.plugins_ms[f"{labels['plugin']}/{labels['extension_point']}"] = _ms(item)
        elif metric == EXTENSION_POINT and labels.get("extension_point"):
            figures.extension_points_ms[labels["extension_point"]] = _ms(item)
    if "Average" not in figures.throughput and not figures.duration_s:
        raise UserError(f"{source}: no {THROUGHPUT} or {DURATION} item", "the workload measured no pods (is it a collectMetrics workload?)")
    return figures


def parse_file(path: Path) -> RunFigures:
    return parse_items(load_json(Path(path).read_bytes()), str(path))


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)} if values else {}


def _plugin_medians(runs: list[RunFigures], keep: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Median over runs of each kept plugin's Perc50/Perc99 per extension point (ms)."""
    out: dict[str, dict[str, float]] = {}
    keys = sorted({k for r in runs for k in r.plugins_ms if k.split("/")[0] in keep})
    for key in keys:
        samples = [r.plugins_ms[key] for r in runs if key in r.plugins_ms]
        out[key] = {p: statistics.median(s.get(p, 0.0) for s in samples) for p in ("Perc50", "Perc99")}
    return out


def summarize(runs: dict[str, dict[str, list[RunFigures]]], plugin_names: tuple[str, ...] = ()) -> dict:
    """workload -> variant -> pods/s median/min/max, Perc50, attempt p50/p99, ratio to vanilla, plugins."""
    out: dict[str, dict] = {}
    for workload, variants in runs.items():
        rows: dict[str, dict] = {}
        for variant, figures in variants.items():
            measured = [f for f in figures if "Average" in f.throughput]  # upstream samples once a second
            row = {"pods_per_second": spread([f.throughput["Average"] for f in measured]),
                   "runs": [round(f.throughput["Average"], 1) for f in measured],
                   "duration_s": spread([f.duration_s for f in figures]),
                   "throughput_perc50": spread([f.throughput.get("Perc50", 0.0) for f in figures]).get("median", 0.0),
                   "attempt_ms": {p: statistics.median(f.attempt_ms.get(p, 0.0) for f in figures)
                                  for p in ("Perc50", "Perc90", "Perc99")},
                   "plugins_ms": _plugin_medians(figures, plugin_names)}
            rows[variant] = row
        _ratios(rows)
        out[workload] = rows
    return out


def _ratio(row: dict, base: dict | None) -> tuple[float | None, str]:
    """Of pods/s medians; where a side has no throughput sample (all its pods scheduled within a
    second), of the scheduling durations instead (same pods: the inverse ratio)."""
    if base is None:
        return None, ""
    mine, theirs = row["pods_per_second"].get("median"), base["pods_per_second"].get("median")
    if mine and theirs:
        return round(mine / theirs, 3), "pods/s"
    mine, theirs = row["duration_s"].get("median"), base["duration_s"].get("median")
    if mine and theirs:
        return round(theirs / mine, 3), "duration"
    return None, ""


def _ratios(rows: dict[str, dict]) -> None:
    """ratio_to_vanilla of every row; ratio_to_base (and its base) of a variant whose row names a baseline
    other than vanilla (debuggable's is spec: the recorder against the same configuration without it)."""
    for variant, row in rows.items():
        row["ratio_to_vanilla"], row["ratio_basis"] = _ratio(row, rows.get(BASELINE))
        known = BY_NAME.get(variant)
        base = known.baseline if known is not None and known.baseline != BASELINE else ""
        if base in rows:
            row["ratio_to_base"], _ = _ratio(row, rows[base])
            row["base"] = base


def regressions(current: dict, reference: dict, threshold: float) -> list[str]:
    """Rows whose ratio to vanilla fell by more than `threshold` (a fraction) from the reference's.

    Ratios, not absolute pods/s: both runs measure vanilla beside the spec on the same machine,
    so a noisy or different runner cancels out. Workloads or variants missing on one side are skipped.
    """
    found = []
    for workload, rows in current.get("summary", {}).items():
        for variant, row in rows.items():
            old = reference.get("summary", {}).get(workload, {}).get(variant, {}).get("ratio_to_vanilla")
            new = row.get("ratio_to_vanilla")
            if variant == BASELINE or not old or new is None:
                continue
            if new < old * (1 - threshold):
                found.append(f"{workload} {variant}: ratio to vanilla {new:.3f}, was {old:.3f} "
                             f"(-{(1 - new / old) * 100:.1f}%, threshold {threshold * 100:.0f}%)")
    return found


def figures_dict(figures: RunFigures) -> dict:
    return asdict(figures)
