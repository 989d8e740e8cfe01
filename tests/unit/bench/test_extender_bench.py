"""`inv bench.extender`'s rounds: Python and Go alternate per cell, every run is in the raw file, and a
row of its p99 renders from it (bench/report.py)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import record, report
from bench.extender import run as extender_run


def _fake(p99_ms: dict[str, list[float]]):
    """Loads that answer each side's next p99 (rps its inverse), as the load generator would report."""
    it = {side: iter(values) for side, values in p99_ms.items()}

    def load(side: str) -> dict:
        p99 = next(it[side])
        return {"requests": 10, "errors": 0, "seconds": 1.0, "rps": 1000 / p99, "p50_ms": p99 / 2, "p99_ms": p99}
    return {side: (lambda side=side: load(side)) for side in p99_ms}


def test_each_cell_alternates_python_and_go_and_logs_every_run(tmp_path):
    cell = {"nodes": 100, "mode": "NodeNames", "verb": "filter", "body_bytes": 1000}
    load = _fake({"python": [4.0, 8.0, 6.0], "go": [8.0, 8.0, 12.0]})
    got, raw = record.measure("bench.extender", lambda: extender_run._cell(cell, load, 3), argv=["inv", "bench.extender"])
    assert [r["side"] for r in raw["runs"]] == ["python", "go"] * 3
    assert {r["measure"] for r in raw["runs"]} == {"100 nodes NodeNames filter"}
    assert raw["runs"][0]["p99_s"] == 0.004 and raw["runs"][0]["p50_s"] == 0.002 and raw["runs"][0]["rps"] == 250.0
    assert got["p99_ratios"] == [0.5, 1.0, 0.5] and got["rps_ratios"] == [2.0, 1.0, 2.0]
    assert got["python"]["p99_ms"] == 6.0 and got["go"]["p99_ms"] == 8.0
    text = extender_run.markdown({"date": "2026-11-27", "seconds": 1.0, "concurrency": 1, "repeats": 3,
                                  "machine": "x", "cells": [got]})
    assert "| 2.00, 1.00, 2.00 | 0.50, 1.00, 0.50 |" in text

    # The raw file gives a p99 row: Python 6 ms over Go 8 ms.
    (tmp_path / "bench/results").mkdir(parents=True)
    (tmp_path / "bench/results/x.json").write_text(json.dumps(raw))
    spec = {"raw": "x.json", "measure": "100 nodes NodeNames filter", "ours": "python", "baseline_side": "go",
            "field": "p99_s", "label": "p99", "baseline": "Go"}
    assert "| 6.00 ms | Go, 8.00 ms | 0.75 (per run 0.50–1.00) |" in report.row(Path(tmp_path), spec)
