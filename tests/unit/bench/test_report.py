"""BENCHMARKS.md is what bench/report.py renders from the raw files (`inv bench.report --check`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import record, report

REPO = Path(__file__).resolve().parents[3]


def test_benchmarks_md_matches_its_raw_files():
    proc = subprocess.run([sys.executable, "-m", "invoke", "bench.report", "--check"], cwd=REPO,
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr


def _copy(tmp_path: Path) -> Path:
    for rel in (report.ROWS, report.HISTORICAL, report.OUTPUT):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, tmp_path / rel)
    manifest = json.loads((REPO / report.ROWS).read_text())
    (tmp_path / "bench/results").mkdir(parents=True, exist_ok=True)
    for spec in manifest["rows"] + manifest.get("records", []):
        for name in [spec["raw"]] + [figure["raw"] for figure in spec.get("figures", []) if figure.get("raw")]:
            shutil.copy2(REPO / "bench/results" / name, tmp_path / "bench/results" / name)
    return tmp_path


def test_check_fails_when_a_figure_is_edited_by_hand(tmp_path):
    root = _copy(tmp_path)
    report.check(root)  # the copy passes
    text = (root / report.OUTPUT).read_text()
    row = next(line for line in text.splitlines() if line.startswith("| start-up"))
    (root / report.OUTPUT).write_text(text.replace(row, row.replace(" s |", "1 s |", 1)))
    with pytest.raises(report.ReportError, match="differs from what the raw files say"):
        report.check(root)


def test_check_fails_when_a_raw_run_changes(tmp_path):
    root = _copy(tmp_path)
    name = json.loads((root / report.ROWS).read_text())["rows"][0]["raw"]
    raw = json.loads((root / "bench/results" / name).read_text())
    for run in raw["runs"]:
        run["seconds"] *= 3
    (root / "bench/results" / name).write_text(json.dumps(raw))
    with pytest.raises(report.ReportError):
        report.check(root)


def _raw(tmp_path: Path, sides: list[str], name: str = "x.json") -> dict:
    (tmp_path / "bench/results").mkdir(parents=True, exist_ok=True)
    runs = [{"measure": "m", "side": side, "seconds": 1.0 + i, "ended_s": float(i), "load1": 0.5}
            for i, side in enumerate(sides)]
    raw = {"schema": 1, "task": "bench.x", "command": "inv bench.x", "commit": "0" * 40, "started": "2026-11-27T00:00:00Z",
           "machine": record.machine(), "load_before": [0.5, 0, 0], "load_after": [0.7, 0, 0], "runs": runs}
    (tmp_path / "bench/results" / name).write_text(json.dumps(raw))
    return {"raw": name, "measure": "m", "label": "x", "baseline": "y"}


def test_a_row_with_fewer_than_three_runs_per_side_says_so(tmp_path):
    assert "| n=1 |" in report.row(tmp_path, _raw(tmp_path, ["ours", "native"]))
    assert "| n=3 |" in report.row(tmp_path, _raw(tmp_path, ["ours", "native"] * 3))


def test_runs_that_did_not_alternate_are_refused(tmp_path):
    with pytest.raises(report.ReportError, match="did not alternate"):
        report.row(tmp_path, _raw(tmp_path, ["ours", "ours", "native", "native"]))


def test_a_missing_raw_file_or_one_without_load_is_refused(tmp_path):
    with pytest.raises(report.ReportError, match="does not exist"):
        report.row(tmp_path, {"raw": "gone.json", "measure": "m", "label": "x", "baseline": "y"})
    spec = _raw(tmp_path, ["ours", "native"])
    path = tmp_path / "bench/results" / spec["raw"]
    raw = json.loads(path.read_text())
    del raw["load_before"]
    path.write_text(json.dumps(raw))
    with pytest.raises(report.ReportError, match="load_before"):
        report.row(tmp_path, spec)


def test_the_machine_is_measured_not_typed_in():
    m = record.machine()
    assert m["cpus"] >= 1 and m["memory_bytes"] > 2**28 and m["kernel"]


def test_phase_medians_come_from_the_rows_own_side(tmp_path):
    spec = _raw(tmp_path, ["ours", "native"] * 3)
    path = tmp_path / "bench/results" / spec["raw"]
    raw = json.loads(path.read_text())
    for i, run in enumerate(raw["runs"]):
        if run["side"] == "ours":
            run["phases"] = {"compile.go": 1.0 + i, "verify": 0.1}
    path.write_text(json.dumps(raw))
    assert report.phases(tmp_path, spec) == "- x: compile.go 3.00, verify 0.10"


def test_a_hand_written_record_row_needs_its_raw_file_with_the_load(tmp_path):
    spec = _raw(tmp_path, ["ours", "native"])
    item = {"raw": spec["raw"], "row": "| r | 2 | 2 | 0.5 | `cmd` | 2026-11-27 |",
            "figures": [{"expr": "len(runs[])", "fmt": "{:.0f}"}], "given": {"0.5": "a goal"}}
    assert report.record_row(tmp_path, item) == item["row"]
    with pytest.raises(report.ReportError, match="does not exist"):
        report.record_row(tmp_path, {"raw": "gone.json", "row": item["row"]})
    path = tmp_path / "bench/results" / spec["raw"]
    raw = json.loads(path.read_text())
    del raw["load_after"]
    path.write_text(json.dumps(raw))
    with pytest.raises(report.ReportError, match="load_after"):
        report.record_row(tmp_path, item)


def test_a_throughput_row_is_higher_is_better_and_its_goal_a_floor(tmp_path):
    spec = _raw(tmp_path, ["spec", "vanilla"] * 3)
    path = tmp_path / "bench/results" / spec["raw"]
    raw = json.loads(path.read_text())
    for run in raw["runs"]:  # spec 90 pods/s, vanilla 100: ratio 0.90
        run["pods_per_second"] = 90.0 if run["side"] == "spec" else 100.0
    path.write_text(json.dumps(raw))
    spec.update(ours="spec", baseline_side="vanilla", field="pods_per_second")
    assert "| 90.0 pods/s | y, 100.0 pods/s | 0.90 (goal ≥ 0.9: met) (per run 0.90–0.90) |" in report.row(tmp_path, dict(spec, goal=0.9))
    assert "0.90 (goal ≥ 0.95: missed)" in report.row(tmp_path, dict(spec, goal=0.95))
    # Negative control: the same runs read as seconds (lower is better) give the inverse verdict.
    seconds = dict(spec, field="seconds", goal=0.95)
    assert "goal ≤ 0.95" in report.row(tmp_path, seconds)


def _with_fields(tmp_path: Path, python: dict, go: dict) -> dict:
    """A raw file of the extender's shape: python and go alternating, each run with latency and rps fields."""
    spec = _raw(tmp_path, ["python", "go"] * 3)
    path = tmp_path / "bench/results" / spec["raw"]
    raw = json.loads(path.read_text())
    for run in raw["runs"]:
        run.update(python if run["side"] == "python" else go)
    path.write_text(json.dumps(raw))
    return dict(spec, ours="python", baseline_side="go")


def test_a_latency_row_is_lower_is_better_in_milliseconds(tmp_path):
    spec = _with_fields(tmp_path, {"p99_s": 0.0074, "rps": 495.5}, {"p99_s": 0.016, "rps": 176.0})
    text = report.row(tmp_path, dict(spec, field="p99_s", goal=0.5))
    assert "| 7.40 ms | y, 16.0 ms | 0.46 (goal ≤ 0.5: met) (per run 0.46–0.46) |" in text
    assert "0.46 (goal ≤ 0.4: missed)" in report.row(tmp_path, dict(spec, field="p99_s", goal=0.4))
    # The same runs' requests/s are higher-is-better by default: 2.82 meets a floor of 2.
    assert "| 495.5 rps | y, 176.0 rps | 2.82 (goal ≥ 2: met) (per run 2.82–2.82) |" in report.row(tmp_path, dict(spec, field="rps", goal=2))
    # Negative control: "better" overrides the field's default, and the verdict flips.
    assert "0.46 (goal ≥ 0.5: missed)" in report.row(tmp_path, dict(spec, field="p99_s", goal=0.5, better="higher"))


def test_a_field_the_report_cannot_render_is_one_clear_error(tmp_path):
    spec = _with_fields(tmp_path, {"p99_s": 0.0074}, {"p99_s": 0.016})
    with pytest.raises(report.ReportError, match="unknown field 'p95_s'"):
        report.row(tmp_path, dict(spec, field="p95_s"))
    with pytest.raises(report.ReportError, match="better 'smaller'"):
        report.row(tmp_path, dict(spec, field="p99_s", better="smaller"))
    with pytest.raises(report.ReportError, match="no run of side 'python'"):  # the field absent from the runs
        report.row(tmp_path, dict(spec, field="rps"))


def test_per_run_ratios_pair_the_alternated_runs_in_order(tmp_path):
    spec = dict(_raw(tmp_path, ["ours", "native"] * 3), per_run=True)  # seconds 1, 2, 3, 4, 5, 6
    assert "| 0.75 (per run: 0.50, 0.75, 0.83) |" in report.row(tmp_path, spec)
    # Without per_run: their range (every generated row shows its spread).
    assert "| 0.75 (per run 0.50–0.83) |" in report.row(tmp_path, dict(spec, per_run=False))


def test_every_row_shows_its_per_run_spread_and_one_pair_has_none(tmp_path):
    shown = report.row(tmp_path, _raw(tmp_path, ["ours", "native"] * 3))  # seconds 1, 2, 3, 4, 5, 6
    assert "| 0.75 (per run 0.50–0.83) |" in shown
    assert "| 0.50 |" in report.row(tmp_path, _raw(tmp_path, ["ours", "native"]))  # n=1: nothing to spread
    rendered = report.render(REPO)
    rows = [line for line in rendered.splitlines() if line.startswith("| ") and "](bench/results/" in line]
    assert rows and all("per run" in line.split(" | ")[3] or "| n=1 |" in line for line in rows), \
        [line[:80] for line in rows if "per run" not in line]


def test_a_raw_file_of_a_dirty_tree_is_marked_dirty(tmp_path):
    spec = _raw(tmp_path, ["ours", "native"] * 3)
    assert f"{'0' * 10}, " in report.row(tmp_path, spec) and "-dirty" not in report.row(tmp_path, spec)  # clean
    raw = json.loads((tmp_path / "bench/results/x.json").read_text())
    (tmp_path / "bench/results/x.json").write_text(json.dumps(dict(raw, commit="0" * 40 + "-dirty")))
    assert f"{'0' * 10}-dirty, " in report.row(tmp_path, spec)
    dirty = [name for name in {s["raw"] for s in json.loads((REPO / report.ROWS).read_text())["rows"]}
             if json.loads((REPO / "bench/results" / name).read_text())["commit"].endswith("-dirty")]
    assert dirty and all(f"[{name}](bench/results/{name}), " in report.render(REPO) for name in dirty)
    for name in dirty:
        line = next(line for line in report.render(REPO).splitlines() if f"[{name}]" in line)
        assert "-dirty, " in line


def _edit_record(root: Path, index: int, old: str, new: str) -> None:
    """Edit a figure where a hand would: the record's row in bench/rows.json, and BENCHMARKS.md to match."""
    manifest = json.loads((root / report.ROWS).read_text())
    row = manifest["records"][index]["row"]
    assert old in row
    manifest["records"][index]["row"] = row.replace(old, new, 1)
    (root / report.ROWS).write_text(json.dumps(manifest))
    (root / report.OUTPUT).write_text((root / report.OUTPUT).read_text().replace(row, manifest["records"][index]["row"]))


@pytest.mark.parametrize("index, old, new", [(0, "1737 reads", "1800 reads"), (1, "9.03 s", "7.03 s"),
                                             (2, "0.50 (goal", "0.95 (goal"), (3, "4.1 KB", "2.1 KB")])
def test_check_fails_when_an_other_measurement_is_edited_in_rows_json_and_benchmarks_md(tmp_path, index, old, new):
    """The "Other measurements" rows are written by hand: every number in their figure and ratio cells is
    recomputed from the raw file, so an edited (or invented) figure fails `--check` even where BENCHMARKS.md
    and rows.json agree. The negative control: the unedited copy passes."""
    root = _copy(tmp_path)
    report.check(root)
    _edit_record(root, index, old, new)
    with pytest.raises(report.ReportError, match="which its raw files do not give"):
        report.check(root)


def test_figure_expressions_read_the_raw_file():
    raw = {"runs": [{"reads": 2}, {"reads": 5}], "results": {"runs": [{"gaps": []}], "max": 9.5}}
    assert report.figure_value(raw, "sum(runs[].reads)") == 7 and report.figure_value(raw, "len(runs[])") == 2
    assert report.figure_value(raw, "median(runs[].reads)") == 3.5 and report.figure_value(raw, "results.max") == 9.5
    assert report.figure_value(raw, "len(results.runs.0.gaps[])") == 0
