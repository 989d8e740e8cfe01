"""Sharding and merging bench.perf runs, over real raw files of whole local runs (bench/results/).

A whole run's raw file is cut into the shard files `bench.perf --shard I/N` writes (its cells dealt by
shards.share, each shard's results made by cells.assemble, the code run.py ends with), merged back with
bench.merge's code, and the merge must give the local run's own summary and table. The shard files are
derived, not produced by running the harness (its compile is an hour cold): the integration test
tests/integration/test_bench_perf.py makes real shard runs.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import report as bench_report
from bench.perf import cells, merge, report, shards
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
FOUR_VARIANTS = "bench-perf-20261127T033226Z.json"  # 2 workloads x 4 variants x 3 repeats, no repeat numbers logged
DEBUGGABLE = "bench-perf-20261127T044051Z.json"  # spec + debuggable, repeat numbers and annotation sizes logged


def whole(name: str) -> dict:
    return json.loads((REPO / "bench" / "results" / name).read_text())


def shard_file(raw: dict, shard: shards.Shard) -> dict:
    """What `bench.perf --shard` writes for this run: its share of the cells, results assembled from them."""
    res = raw["results"]
    found = cells.from_raw(raw, "whole")
    mine = set(shards.share(shard, res["repeats"], res["workloads"]))
    sub = cells.empty(res["workloads"], res["variants"])
    runs = []
    for label, row in found.items():
        for variant, cell in row.items():
            logged = [r for r in raw["runs"] if r["measure"] == label and r["side"] == variant]
            for k, rep in enumerate(cell["repeats"]):
                if (rep, label) in mine:
                    cells.add(sub, label, variant, rep, cell["figures"][k], cell["states"][k], cell["sizes"][k])
                    runs.append(dict(logged[k], repeat=rep))
    # the shard's own clock: from 0, each run taking the time it took in the whole run
    timeline = sorted(r["ended_s"] for r in raw["runs"])
    slot = {t: t - before for before, t in zip([0.0, *timeline], timeline)}
    runs.sort(key=lambda r: r["ended_s"])
    clock = 0.0
    for r in runs:
        clock += slot[r["ended_s"]]
        r["ended_s"] = round(clock, 3)
    meta = {k: v for k, v in res.items() if k not in ("summary", "runs")}
    meta["shard"] = shard.as_dict()
    return dict(raw, runs=runs, results=cells.assemble(meta, sub, tuple(res["plugin_names"])),
                shard=shard.as_dict(), partial=True)


def shard_files(raw: dict, count: int) -> list[tuple[str, dict]]:
    return [(f"shard-{i}.json", shard_file(raw, shards.Shard(i, count))) for i in range(1, count + 1)]


def test_shard_flag_is_i_of_n_and_bad_forms_are_one_line():
    assert shards.parse("2/3") == shards.Shard(2, 3) and str(shards.parse(" 1 / 2 ")) == "1/2"
    for bad in ("3/2", "0/2", "1/0", "2", "a/b", "1/2/3"):
        with pytest.raises(UserError, match="--shard"):
            shards.parse(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_shares_partition_the_groups_deterministically_keeping_a_repeat_of_a_workload_whole(count):
    labels = ["SchedulingBasic/500Nodes", "SchedulingBasicLabelled/500Nodes"]
    every = shards.groups(3, labels)
    shares = [shards.share(shards.Shard(i, count), 3, labels) for i in range(1, count + 1)]
    assert sorted(g for s in shares for g in s) == sorted(every) and sum(map(len, shares)) == len(every)
    assert shares == [shards.share(shards.Shard(i, count), 3, labels) for i in range(1, count + 1)]
    for share in shares:  # each in local order: repeat, then workload
        assert share == sorted(share, key=every.index)


def test_more_shards_than_groups_is_refused_before_any_work():
    with pytest.raises(UserError, match=r"--shard 1/7: only 6 group\(s\)"):
        shards.share(shards.Shard(1, 7), 3, ["a", "b"])


def test_cells_read_back_from_a_whole_raw_file_give_its_own_summary():
    """The negative control of the merge test below: assemble itself reproduces what the local run wrote."""
    for name in (FOUR_VARIANTS, DEBUGGABLE):
        raw = whole(name)
        res = raw["results"]
        again = cells.assemble({}, cells.from_raw(raw, name), tuple(res["plugin_names"]))
        assert again["summary"] == res["summary"] and again["runs"] == res["runs"], name


@pytest.mark.parametrize("name,count", [(FOUR_VARIANTS, 2), (FOUR_VARIANTS, 3), (DEBUGGABLE, 2)])
def test_merging_the_shards_of_a_run_gives_the_cells_and_table_of_the_whole_run(name, count):
    raw = whole(name)
    parts = shard_files(raw, count)
    for _, part in parts:  # each shard alone is a part: fewer runs than the whole
        assert 0 < len(part["runs"]) < len(raw["runs"])
    merged = merge.merge(list(reversed(parts)), "inv bench.merge x")
    assert merged["results"]["summary"] == raw["results"]["summary"]
    assert merged["results"]["runs"] == raw["results"]["runs"]
    assert report.markdown(merged["results"]) == report.markdown(raw["results"])
    assert "partial" not in merged and len(merged["runs"]) == len(raw["runs"])
    assert [s["shard"] for s in merged["shards"]] == [f"{i}/{count}" for i in range(1, count + 1)]
    assert {r["shard"] for r in merged["runs"]} == set(range(1, count + 1))


def test_a_shard_missing_or_given_twice_is_named_and_never_merged_as_whole():
    parts = shard_files(whole(FOUR_VARIANTS), 3)
    with pytest.raises(UserError, match=r"shard 2/3 missing \(have 1/3, 3/3\)"):
        merge.merge([parts[0], parts[2]], "x")
    with pytest.raises(UserError, match=r"shard 1/3 given twice: shard-1.json and again.json"):
        merge.merge([*parts, ("again.json", parts[0][1])], "x")
    stopped = dict(parts[1][1], results=None)  # a shard stopped half way (the checkpoint writes no results)
    with pytest.raises(UserError, match=r"stopped.json: shard 2/3 stopped before it finished"):
        merge.merge([parts[0], ("stopped.json", stopped), parts[2]], "x")
    with pytest.raises(UserError, match=r"whole.json: names no shard"):
        merge.merge([parts[0], ("whole.json", whole(FOUR_VARIANTS))], "x")


@pytest.mark.parametrize("where,value,what", [
    (("commit",), "0" * 40, "commit"),
    (("results", "spec"), "other.yaml", "spec"),
    (("results", "spec_sha256"), "f" * 64, "spec content"),
    (("results", "kubernetes"), "v1.37.0", "Kubernetes version"),
    (("results", "harness", "binary"), "/c/perf-harness/otherkey/perf.test", "harness inputs key"),
    (("results", "repeats"), 5, "repeats"),
    (("shard", "count"), 3, "shard count"),
])
def test_shards_of_different_runs_are_refused_in_one_line_naming_what_differs(where, value, what):
    parts = shard_files(whole(FOUR_VARIANTS), 2)
    other = copy.deepcopy(parts[1][1])
    node = other
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    with pytest.raises(UserError, match=f"shard-2.json is not a shard of the run shard-1.json is: {what} ") as err:
        merge.merge([parts[0], ("shard-2.json", other)], "x")
    assert "\n" not in str(err.value)


def test_a_shard_holding_other_cells_than_its_share_is_refused():
    parts = shard_files(whole(FOUR_VARIANTS), 2)
    edited = copy.deepcopy(parts[1][1])  # a run of repeat 2 relabelled repeat 1: 1 twice, 2 missing
    edited["runs"] = [dict(r, repeat=1) if r["repeat"] == 2 else r for r in edited["runs"]]
    with pytest.raises(UserError, match=r"shard-2.json: \S+ vanilla has repeats \[1, 3\], shard 2/2 makes \[1, 2, 3\]"):
        merge.merge([parts[0], ("shard-2.json", edited)], "x")


def test_bench_report_refuses_a_shard_and_renders_the_merged_file_with_alternation_per_shard(tmp_path):
    parts = shard_files(whole(FOUR_VARIANTS), 2)
    merged = merge.merge(parts, "inv bench.merge x")
    results_dir = tmp_path / "bench" / "results"
    results_dir.mkdir(parents=True)
    (results_dir / "merged.json").write_text(json.dumps(merged))
    (results_dir / "shard.json").write_text(json.dumps(parts[0][1]))
    row = {"raw": "merged.json", "measure": "SchedulingBasic/5000Nodes_10000Pods_QueueingHintsEnabled", "ours": "spec",
           "baseline_side": "vanilla", "field": "pods_per_second", "label": "L", "baseline": "B"}
    line = bench_report.row(tmp_path, row)
    assert line.startswith("| L | ") and "n=3" in line
    with pytest.raises(UserError, match=r"shard.json: a partial run \(shard 1/2\), not the whole"):
        bench_report.row(tmp_path, dict(row, raw="shard.json"))
    # three shards: a workload's repeats ran on different shards, at overlapping times of their own clocks;
    # read on one clock (the shard dropped) they do not alternate: the check is per shard, not disabled
    three = merge.merge(shard_files(whole(FOUR_VARIANTS), 3), "x")["runs"]
    measure = [r for r in three if r["measure"] == row["measure"]]
    assert len({r["shard"] for r in measure}) == 3
    assert bench_report._alternated(measure, ("spec", "vanilla"))
    assert not bench_report._alternated([dict(r, shard=None) for r in measure], ("spec", "vanilla"))


def test_bench_merge_task_writes_the_merged_raw_file_and_refuses_a_missing_shard_in_one_line(tmp_path):
    parts = shard_files(whole(DEBUGGABLE), 2)
    for name, part in parts:
        (tmp_path / name).write_text(json.dumps(part))
    out = tmp_path / "merged.json"
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.merge", str(tmp_path / "shard-*.json"), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    merged = json.loads(out.read_text())
    assert merged["results"]["summary"] == whole(DEBUGGABLE)["results"]["summary"]
    assert merged["command"].startswith("inv bench.merge") and "| SchedulingBasic/" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.merge", str(tmp_path / "shard-1.json"),
                           "--out", str(tmp_path / "never.json")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and not (tmp_path / "never.json").exists()
    assert "shard 2/2 missing (have 1/2)" in proc.stderr and "Traceback" not in proc.stderr


def test_the_ci_matrix_numbers_shards_as_bench_perf_does_and_merges_every_one():
    import yaml

    workflow = yaml.safe_load((REPO / "ci/github/perf.yml").read_text())
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    matrix = shard_job["strategy"]["matrix"]
    (count,) = matrix["count"]
    assert matrix["index"] == list(range(1, count + 1))  # 1..N, as `--shard I/N` and the Job's index + 1
    assert [shards.parse(f"{i}/{count}") for i in matrix["index"]]
    runs = [s["run"] for s in shard_job["steps"] if "bench.perf" in s.get("run", "")]
    assert len(runs) == 1 and "--shard ${{ matrix.index }}/${{ matrix.count }} --json perf-shard.json" in runs[0]
    uploaded = next(s for s in shard_job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert uploaded["with"]["path"] == "perf-shard.json"
    assert merge_job["needs"] == "shard" and shard_job["strategy"]["fail-fast"] is False
    merged = [s["run"] for s in merge_job["steps"] if "bench.merge" in s.get("run", "")]
    assert merged == ["inv bench.merge 'shards/*/perf-shard.json' --out bench-perf.json"]


def test_bench_perf_refuses_more_shards_than_groups_before_compiling_anything(tmp_path):
    """The example spec's plugin labels pods, so 5Nodes gets its labelled copy: two groups at one repeat.
    The refusal comes before the harness is prepared (the cache dir stays empty)."""
    from bench.perf import run, variants
    from scheduler_build import spec as spec_mod

    example = spec_mod.load(REPO / "examples" / "underlay" / "scheduler.yaml")
    with pytest.raises(UserError, match=r"--shard 3/3: only 2 group\(s\)"):
        run.run(example, variants.parse_workloads("5Nodes"), ["vanilla", "spec"], 1, tmp_path / "cache", "unused",
                shard=shards.Shard(3, 3))
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("args,words", [
    (["--shard", "3/2"], "error: --shard 3/2: the index must be between 1 and the count"),
    (["--shard", "1/2", "--compare", "x.json"], "error: --compare with --shard: a shard holds part of the cells"),
])
def test_bench_perf_decides_its_shard_flag_before_any_work(args, words):
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.perf", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_run_stopped_half_way_renders_only_where_its_row_says_partial_and_says_so(tmp_path):
    stopped = dict(whole(FOUR_VARIANTS), partial=True)
    results_dir = tmp_path / "bench" / "results"
    results_dir.mkdir(parents=True)
    (results_dir / "stopped.json").write_text(json.dumps(stopped))
    (results_dir / "shard.json").write_text(json.dumps(shard_files(whole(FOUR_VARIANTS), 2)[0][1]))
    row = {"raw": "stopped.json", "measure": "SchedulingBasic/5000Nodes_10000Pods_QueueingHintsEnabled", "ours": "spec",
           "baseline_side": "vanilla", "field": "pods_per_second", "label": "L", "baseline": "B"}
    with pytest.raises(UserError, match=r"stopped.json: a partial run \(stopped half way\)"):
        bench_report.row(tmp_path, row)  # negative control: no row flag, no row
    line = bench_report.row(tmp_path, dict(row, partial=True))
    assert "(partial: the run was stopped before its last repeat)" in line
    with pytest.raises(UserError, match=r"shard.json: a partial run \(shard 1/2\)"):
        bench_report.row(tmp_path, dict(row, raw="shard.json", partial=True))  # a shard is merged, never shown alone


def test_two_shards_started_in_the_same_second_on_one_cache_get_a_runs_directory_each(tmp_path):
    # A CI matrix's shard jobs sharing one cache start together (act's host jobs did: the second shard's
    # labelled workload met the first's directory, FileExistsError).
    from bench.perf import run

    first, second = run.runs_dir(tmp_path), run.runs_dir(tmp_path)
    assert first != second and first.parent == second.parent == tmp_path / "perf-runs"
    assert first.is_dir() and second.is_dir() and not any(first.iterdir())
