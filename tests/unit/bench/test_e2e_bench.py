"""`inv bench.e2e`'s raw file: every variant's run per round, so "b vs a" renders as a pods/s row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import e2e_bench, record, report


def test_the_bind_span_crosses_midnight_and_gives_the_throughput():
    assert e2e_bench.bind_span([86399.5, 86399.9, 0.5]) == pytest.approx(1.0)
    assert e2e_bench.throughput([86399.5, 86399.9, 0.5]) == pytest.approx(2.0)
    assert e2e_bench.bind_span([3.0]) == 0.0 and e2e_bench.throughput([3.0]) == 0.0


def test_variants_interleaved_per_round_render_as_a_pods_per_second_row(tmp_path: Path):
    rates = {"a": 100.0, "b": 90.0, "c": 50.0, "d": 20.0}

    def rounds() -> None:  # bench.e2e's loop: every variant once per round, in --variants order
        for _ in range(3):
            for v in "abcd":
                record.run("throughput", v, 999 / rates[v], pods_per_second=rates[v], binds=1000)

    _, raw = record.measure("bench.e2e", rounds, argv=["inv", "bench.e2e"])
    (tmp_path / "bench/results").mkdir(parents=True)
    (tmp_path / "bench/results/e.json").write_text(json.dumps(raw))
    spec = {"raw": "e.json", "measure": "throughput", "ours": "b", "baseline_side": "a", "field": "pods_per_second",
            "label": "b vs a", "baseline": "in-tree", "goal": 0.9}
    assert "| 90.0 pods/s | in-tree, 100.0 pods/s | 0.90 (goal ≥ 0.9: met) (per run 0.90–0.90) | n=3 |" in report.row(tmp_path, spec)
    # Negative control: variant a run twice in a row in one round breaks the alternation with b.
    raw["runs"].insert(1, dict(raw["runs"][0]))
    for i, run in enumerate(raw["runs"]):  # these runs took no time: order them as logged
        run["ended_s"] = float(i)
    (tmp_path / "bench/results/e.json").write_text(json.dumps(raw))
    with pytest.raises(report.ReportError, match="did not alternate"):
        report.row(tmp_path, spec)
