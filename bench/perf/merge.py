"""`inv bench.merge`: the raw files of a sharded bench.perf run joined into the raw file of the whole run.

Pure but for reading the files. Shards belong together only when they measured the same thing the same
way: the same commit, spec (path and content), Kubernetes version, harness binaries (their inputs keys),
variants, workloads, repeats and shard count. Each shard must hold exactly the cells its number gives it
(shards.py), every shard must be there once, and each must have finished: a merge never makes a partial
run look whole. The merged results are made by the code a local run uses (cells.assemble), so the merged
file renders as a local run's does. Its runs keep the shard each ran in and that shard's clock (`ended_s`
counts from the shard's own start): alternation is a property of one machine's timeline.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.perf import cells, shards
from scheduler_build.errors import UserError

TASK = "bench.perf"
# what must be equal in every shard: (where in the raw file, what to call it)
SAME = (("commit", "commit"), ("results.spec", "spec"), ("results.spec_sha256", "spec content"),
        ("results.kubernetes", "Kubernetes version"), ("harness_keys", "harness inputs key"),
        ("results.variants", "variants"), ("results.repeats", "repeats"), ("shard.count", "shard count"))


def load(path: Path) -> dict:
    """A shard's raw file; a UserError naming the file when it is not one."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file", "pass the raw files `inv bench.perf --shard I/N --json FILE` wrote")
    try:
        raw = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not JSON ({e})", "pass a raw file bench.perf wrote") from None
    if not isinstance(raw, dict) or raw.get("task") != TASK:
        raise UserError(f"{path}: not a raw file of {TASK} (task {raw.get('task') if isinstance(raw, dict) else None!r})",
                        "pass the raw files `inv bench.perf --shard I/N` wrote")
    return raw


def _value(raw: dict, where: str) -> object:
    if where == "harness_keys":
        res = raw.get("results") or {}
        found = res.get("harnesses") or {"*": res.get("harness") or {}}  # older files: one harness
        return {v: h.get("key") or Path(h.get("binary", "")).parent.name for v, h in found.items()}
    node: object = raw
    for part in where.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _check_together(named: list[tuple[str, dict]]) -> None:
    first_name, first = named[0]
    for name, raw in named[1:]:
        for where, what in SAME:
            if _value(raw, where) != _value(first, where):
                raise UserError(f"{name} is not a shard of the run {first_name} is: {what} "
                                f"{_value(raw, where)!r} vs {_value(first, where)!r}",
                                "merge only the shards of one `bench.perf --shard I/N` run (same commit, spec, flags)")


def _shards(named: list[tuple[str, dict]]) -> dict[int, tuple[str, dict]]:
    """index -> (name, raw); a UserError for a shard given twice or missing."""
    by_index: dict[int, tuple[str, dict]] = {}
    for name, raw in named:
        shard = shards.from_dict(raw.get("shard"), name)
        if shard.index in by_index:
            raise UserError(f"shard {shard} given twice: {by_index[shard.index][0]} and {name}", "pass each shard once")
        by_index[shard.index] = (name, raw)
    count = shards.from_dict(named[0][1].get("shard"), named[0][0]).count
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise UserError(f"shard {', '.join(missing)} missing (have {', '.join(f'{i}/{count}' for i in sorted(by_index))}): "
                        "the merge would be a partial run",
                        f"run `inv bench.perf ... --shard {missing[0]}` (the same flags) and pass its raw file too")
    return by_index


def _check_share(name: str, raw: dict, found: dict) -> None:
    """The shard holds exactly the (repeat, workload) groups its number gives it, each with every variant."""
    res = raw["results"]
    shard = shards.from_dict(raw["shard"], name)
    want = set(shards.share(shard, int(res["repeats"]), list(res["workloads"])))
    for label, row in found.items():
        for variant, cell in row.items():
            have = {(rep, label) for rep in cell["repeats"]}
            if have != {g for g in want if g[1] == label} or len(cell["repeats"]) != len(have):
                raise UserError(f"{name}: {label} {variant} has repeats {sorted(r for r, _ in have)}, shard {shard} "
                                f"makes {sorted(r for r, lb in want if lb == label)}",
                                "the file was edited or cut short: run that shard again")


def merge(files: list[tuple[str, dict]], command: str) -> dict:
    """The raw file of the whole run from its shards' raw files (name, raw); a UserError when they do not fit."""
    if not files:
        raise UserError("bench.merge: no raw files given", "e.g. inv bench.merge 'perf-shard-*.json' --out perf.json")
    for name, raw in files:
        shard = shards.from_dict(raw.get("shard"), name)
        if not isinstance(raw.get("results"), dict):
            raise UserError(f"{name}: shard {shard} stopped before it finished (no results)",
                            "run that shard again; only finished shards are merged")
    _check_together(files)
    by_index = _shards(files)
    ordered = [by_index[i] for i in sorted(by_index)]
    first = ordered[0][1]["results"]
    merged = cells.empty(list(first["workloads"]), list(first["variants"]))
    for name, raw in ordered:
        found = cells.from_raw(raw, name)
        _check_share(name, raw, found)
        for label, row in found.items():
            for variant, cell in row.items():
                for rep, fig, state, size in zip(cell["repeats"], cell["figures"], cell["states"], cell["sizes"]):
                    cells.add(merged, label, variant, rep, fig, state, size)
    for row in merged.values():
        for variant, cell in row.items():  # repeat order, as a local run makes them
            order = sorted(range(len(cell["repeats"])), key=cell["repeats"].__getitem__)
            row[variant] = {k: [v[i] for i in order] for k, v in cell.items()}
    return _raw(ordered, merged, first, command)


def _raw(ordered: list[tuple[str, dict]], merged: dict, first: dict, command: str) -> dict:
    workloads, chosen = list(first["workloads"]), list(first["variants"])
    meta = {k: v for k, v in first.items() if k not in ("summary", "runs", "shard")}
    meta.update(runs_dir="", machine_before={}, machine_after={},
                shards=[{"shard": str(shards.from_dict(raw["shard"], name)), "file": name,
                         "runs_dir": raw["results"].get("runs_dir", ""), "harnesses": raw["results"].get("harnesses"),
                         "machine_before": raw["results"].get("machine_before"),
                         "machine_after": raw["results"].get("machine_after")} for name, raw in ordered])
    results = cells.assemble(meta, merged, tuple(first.get("plugin_names") or ()))
    position = {(lb, v): (workloads.index(lb), chosen.index(v)) for lb in workloads for v in chosen}
    runs = [dict(r, shard=raw["shard"]["index"]) for _, raw in ordered for r in raw["runs"]]
    runs.sort(key=lambda r: (r.get("repeat", 0), *position.get((r["measure"], r["side"]), (0, 0))))
    raws = [raw for _, raw in ordered]
    return {
        "schema": raws[0].get("schema"), "task": TASK, "command": command, "commit": raws[0]["commit"],
        "started": min(r["started"] for r in raws),
        "machine": raws[0]["machine"],
        # the busiest shard's load: a figure's worst case, each shard's own is under "shards"
        "load_before": [max(r["load_before"][i] for r in raws) for i in range(3)],
        "load_after": [max(r["load_after"][i] for r in raws) for i in range(3)],
        "shards": [{"shard": str(shards.from_dict(raw["shard"], name)), "file": name, "command": raw["command"],
                    "started": raw["started"], "machine": raw["machine"], "load_before": raw["load_before"],
                    "load_after": raw["load_after"]} for name, raw in ordered],
        "runs": runs, "results": results,
    }


def expand(files: str) -> list[str]:
    """`a.json,b.json` or a quoted glob (`'perf-shard-*.json'`), in the order given, globs sorted."""
    import glob

    names: list[str] = []
    for part in (p.strip() for p in str(files).split(",")):
        if not part:
            continue
        matched = sorted(glob.glob(part)) if glob.has_magic(part) else [part]
        if not matched:
            raise UserError(f"bench.merge: {part!r} matches no file", "pass the shards' raw files")
        names += matched
    return names
