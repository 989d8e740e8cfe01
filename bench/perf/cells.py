"""bench.perf's cells and the results made from them. Pure: no process, no file.

Cells: workload label -> variant -> {"repeats", "figures", "states", "sizes"}, one entry per run in
the order the runs were made (repeat order). A local run fills them as it goes (run.py); a merge
reads them back out of raw files (`from_raw`) and both make the results with `assemble`, so a merged
run's results are computed exactly as a local run's are.
"""

from __future__ import annotations

import statistics

from bench.perf import profile as cpu
from bench.perf import results
from scheduler_build.errors import UserError

SIZE_KEYS = ("pods", "recorded_pods", "annotation_bytes_median", "annotation_bytes_max")  # run.record_sizes


def empty(labels: list[str], chosen: list[str]) -> dict:
    return {lb: {v: _cell() for v in chosen} for lb in labels}


def _cell() -> dict:
    return {"repeats": [], "figures": [], "states": [], "sizes": [], "profiles": []}


def add(cells: dict, label: str, variant: str, repeat: int, figures: results.RunFigures, state: str,
        sizes: dict, profile: dict | None = None) -> None:
    """One run into its cell; profile: its CPU attribution (`--profile`), {} without one."""
    cell = cells[label][variant]
    cell["profiles"].append(profile or {})
    cell["repeats"].append(repeat)
    cell["figures"].append(figures)
    cell["states"].append(state)
    cell["sizes"].append(sizes)


def _annotation_bytes(sizes: list[dict]) -> dict:
    """Over a cell's runs: recorded pods per run, and the median (of the runs' medians) and max bytes per pod."""
    sizes = [s for s in sizes if s]
    if not sizes:
        return {}
    return {"recorded_pods": [s["recorded_pods"] for s in sizes], "pods": [s["pods"] for s in sizes],
            "median": statistics.median(s["annotation_bytes_median"] for s in sizes),
            "max": max(s["annotation_bytes_max"] for s in sizes)}


def assemble(meta: dict, cells: dict, plugin_names: tuple[str, ...]) -> dict:
    """The results dict of a run: `meta` (what ran, where) plus the summary and every run's figures. A
    workload without runs (a shard's share may hold none of its repeats) is left out."""
    cells = {lb: row for lb, row in cells.items() if any(c["figures"] for c in row.values())}
    summary = results.summarize({lb: {v: c["figures"] for v, c in row.items()} for lb, row in cells.items()},
                                plugin_names)
    for label, row in cells.items():
        for variant, cell in row.items():
            summary[label][variant]["batching"] = "; ".join(dict.fromkeys(cell["states"]))
            if any(cell["sizes"]):
                summary[label][variant]["annotation_bytes"] = _annotation_bytes(cell["sizes"])
            if any(cell["profiles"]):
                summary[label][variant]["profile"] = cpu.median_summary(cell["profiles"])
    runs = {lb: {v: [results.figures_dict(f) for f in c["figures"]] for v, c in row.items()} for lb, row in cells.items()}
    return dict(meta, summary=summary, runs=runs)


def from_raw(raw: dict, source: str) -> dict:
    """The cells a raw file of bench.perf holds: each run's figures from its results, its repeat, batching
    state and annotation sizes from the run the file logged for it (the i-th logged run of a workload and
    variant is the i-th figures; a file without repeat numbers is a whole local run, so they count from 1)."""
    res = raw.get("results")
    if not isinstance(res, dict) or not isinstance(res.get("runs"), dict):
        raise UserError(f"{source}: no results (the run was stopped before it finished)",
                        "run that shard again; only a finished run can be merged")
    cells = empty(list(res["runs"]), list(res.get("variants") or []))
    for label, row in res["runs"].items():
        for variant, figure_list in row.items():
            logged = [r for r in raw.get("runs", []) if r.get("measure") == label and r.get("side") == variant]
            if len(logged) != len(figure_list):
                raise UserError(f"{source}: {label} {variant}: {len(figure_list)} figures but {len(logged)} logged runs",
                                "the file was edited or cut short: run that shard again")
            cells[label].setdefault(variant, _cell())
            for k, (figures, run) in enumerate(zip(figure_list, logged)):
                sizes = {key: run[key] for key in SIZE_KEYS if key in run}
                add(cells, label, variant, int(run.get("repeat", k + 1)), results.RunFigures(**figures),
                    str(run.get("batching", "")), sizes, run.get("profile") or {})
    return cells
