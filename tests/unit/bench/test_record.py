"""bench/record.py: the raw file of a bench, and its checkpoint while a long bench runs."""

from __future__ import annotations

import json

import pytest

from bench import record


def test_a_checkpointed_bench_stopped_half_way_keeps_its_runs_marked_partial(tmp_path):
    path = tmp_path / "raw.json"

    def stopped() -> None:
        record.run("w", "spec", 10.0, pods_per_second=100.0)
        record.run("w", "debuggable", 11.0, pods_per_second=90.0)
        raise KeyboardInterrupt  # the deadline: the bench never returns

    with pytest.raises(KeyboardInterrupt):
        record.measure("bench.x", stopped, argv=["inv", "bench.x"], checkpoint=path)
    raw = json.loads(path.read_text())
    assert raw["partial"] is True and raw["results"] is None and raw["command"] == "inv bench.x"
    assert [(r["side"], r["pods_per_second"]) for r in raw["runs"]] == [("spec", 100.0), ("debuggable", 90.0)]
    assert {"commit", "machine", "load_before", "load_after", "started"} <= set(raw)


def test_a_finished_bench_is_whole_and_nothing_is_written_without_a_checkpoint(tmp_path):
    path = tmp_path / "raw.json"

    def finished() -> dict:
        record.run("w", "spec", 10.0)
        return {"ok": 1}

    results, raw = record.measure("bench.x", finished, argv=["inv", "bench.x"], checkpoint=path)
    assert results == {"ok": 1} and "partial" not in raw and len(raw["runs"]) == 1
    assert json.loads(path.read_text())["partial"] is True  # the checkpoint; the caller writes the whole record
    record.write(raw, path)
    assert "partial" not in json.loads(path.read_text())
    other = tmp_path / "none.json"  # negative control: no checkpoint, no file during the run
    record.measure("bench.x", lambda: record.run("w", "spec", 1.0), argv=["inv"])
    assert not other.exists() and not record._partial


def test_a_path_in_the_checkout_is_recorded_relative_to_it_so_shards_of_two_checkouts_name_one_spec(tmp_path):
    # Two CI runners check the commit out in different directories (act: one per job); the spec's recorded
    # path is the merge's "same spec" check, so it must not carry the checkout's own directory.
    spec = record.REPO / "examples" / "underlay" / "scheduler.yaml"
    assert record.shown(spec) == "examples/underlay/scheduler.yaml"
    assert record.shown(tmp_path / "scheduler.yaml") == str((tmp_path / "scheduler.yaml").resolve())
