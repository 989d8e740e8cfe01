"""`inv test` (tasks.py): tiers in order, each its own pytest run, stopping at the first failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from invoke.exceptions import Exit

import tasks

REPO = Path(__file__).resolve().parents[3]


def runner(codes: dict[str, int]):
    ran: list[str] = []

    def run_one(name: str, out: Path) -> int:
        ran.append(name)
        return codes.get(name, 0)

    return run_one, ran


def test_the_tiers_run_cheapest_first_and_node_alone():
    names = [name for name, _ in tasks.TIERS]
    assert names == ["unit", "integration", "e2e", "node", "remote-engine-and-pipelines", "unit-pythons"]
    assert dict(tasks.TIERS)["unit"] == tasks.UNIT


def test_a_failing_tier_stops_the_run(tmp_path):
    names = [name for name, _ in tasks.TIERS]
    run_one, ran = runner({"integration": 1})
    with pytest.raises(Exit, match="integration failed; not run: e2e, node"):
        tasks.run_tiers(names, run_one, tmp_path)
    assert ran == ["unit", "integration"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [(s["tier"], s["exit_code"]) for s in summary] == [("unit", 0), ("integration", 1)]


def test_keep_going_runs_every_tier_and_still_fails(tmp_path):
    names = [name for name, _ in tasks.TIERS]
    run_one, ran = runner({"unit": 1, "e2e": 2})
    with pytest.raises(Exit, match="unit, e2e failed"):
        tasks.run_tiers(names, run_one, tmp_path, keep_going=True)
    assert ran == names


def test_cpu_busy_is_the_busy_share_of_all_cpu_time_between_two_readings():
    before = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n"
    after = "cpu  400 0 150 1100 50 0 0 0 0 0\ncpu0 1 2 3\n"  # 400 busy of 700: 0.57
    assert tasks.cpu_busy(before, after) == 0.57
    assert tasks.cpu_busy(before, before) is None  # no time passed
    assert tasks.cpu_busy("", after) is None and tasks.cpu_busy(before, "intr 1 2\n") is None
    idle = "cpu  100 0 50 1500 50 0 0 0 0 0\n"  # negative control: only idle grew
    assert tasks.cpu_busy(before, idle) == 0.0


def test_each_tier_records_how_busy_the_cpus_were(tmp_path):
    names = [name for name, _ in tasks.TIERS]
    tasks.run_tiers(names, lambda name, out: time.sleep(0.1) or 0, tmp_path)  # 0.1 s: ten of the kernel's ticks
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [s["tier"] for s in summary] == names and all(0.0 <= s["cpu_busy"] <= 1.0 for s in summary), summary


def test_all_passing_or_empty_tiers_pass(tmp_path):
    # Negative control of the two above; an empty selection (pytest's exit 5) is not a failure.
    names = [name for name, _ in tasks.TIERS]
    run_one, ran = runner({"node": tasks.NO_TESTS})
    assert tasks.run_tiers(names, run_one, tmp_path) == names


COLLECT = """
import json, sys, pytest
class Marks:
    items = []
    def pytest_collection_finish(self, session):
        Marks.items = [sorted({m.name for m in item.iter_markers()}) for item in session.items]
pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"], plugins=[Marks()])
print(json.dumps(Marks.items))
"""


def test_every_test_is_in_exactly_one_tier():
    from _pytest.mark.expression import Expression

    proc = subprocess.run([sys.executable, "-c", COLLECT], cwd=REPO, capture_output=True, text=True)
    items = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(items) > 100
    tiers = [(name, Expression.compile(marker)) for name, marker in tasks.TIERS if name != "unit-pythons"]
    for marks in items + [["integration", "pipelines"], ["e2e", "node"], ["integration", "remote_engine"]]:
        chosen = [name for name, expr in tiers if expr.evaluate(lambda m, marks=marks: m in marks)]
        assert len(chosen) == 1, (marks, chosen)


def test_a_tier_records_its_junit_xml_and_durations(tmp_path):
    tests = tmp_path / "t"
    tests.mkdir()
    (tests / "test_one.py").write_text("def test_ok():\n    pass\n")
    # the repository's hooks (tests/conftest.py), without its fixtures' imports mattering here
    (tests / "conftest.py").write_text("from tests.conftest import pytest_addoption, pytest_runtest_logreport, "
                                       "pytest_sessionfinish  # noqa: F401\n")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(REPO),
            "-c", str(REPO / "pyproject.toml"), str(tests),
            *tasks.records_args(tmp_path, "unit")]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_ok" in (tmp_path / "unit.xml").read_text()
    assert "test_one.py::test_ok" in (tmp_path / "unit-durations.txt").read_text()


def test_a_tier_started_beside_another_runs_at_once_and_is_collected_at_its_turn(tmp_path):
    """testkit/beside.py with real processes: the early tier runs while the foreground one does, its exit
    code comes back at its own turn, and a run that ends first stops it."""
    from testkit.beside import Beside

    lines: list[str] = []
    early = Beside(REPO, lines.append)
    marker = tmp_path / "started"
    early.start("e2e", [sys.executable, "-c", f"import pathlib, time; pathlib.Path({str(marker)!r}).touch(); "
                        "time.sleep(0.5); print('e2e done'); raise SystemExit(3)"], tmp_path)
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:  # it runs before its turn
        time.sleep(0.05)
    assert marker.exists()
    assert early.started("e2e") and early.finish("e2e") == 3  # its own exit code, at its turn
    assert "e2e done" in (tmp_path / "e2e.log").read_text()
    early.start("slow", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path)
    started = time.monotonic()
    early.stop_all()  # negative control: a run that ended first leaves it not running
    assert time.monotonic() - started < 30 and not early.started("slow")


def test_a_tier_started_at_low_priority_runs_at_nice_19_in_its_own_lowered_autogroup(tmp_path):
    """The other Pythons' unit runs beside the node tier take only what it leaves: nice 19, and (with
    autogroup scheduling, where nice ranks only within a session) their session's group lowered too."""
    from testkit.beside import Beside

    probe = ("import os, pathlib; g = pathlib.Path('/proc/self/autogroup'); "
             "print('nice', os.nice(0)); print('group', g.read_text().strip() if g.exists() else 'none')")
    early = Beside(REPO, [].append)
    early.start("low", [sys.executable, "-c", probe], tmp_path, low_priority=True)
    early.start("normal", [sys.executable, "-c", probe], tmp_path)  # negative control
    assert early.finish("low") == 0 and early.finish("normal") == 0
    low, normal = (tmp_path / "low.log").read_text(), (tmp_path / "normal.log").read_text()
    assert "nice 19" in low and f"nice {os.nice(0)}" in normal, (low, normal)  # normal: the caller's own
    if "group none" not in low:
        assert low.splitlines()[1].endswith("nice 19"), low
        assert not normal.splitlines()[1].endswith("nice 19"), normal


def test_the_full_run_starts_e2e_with_integration_and_collects_it_at_its_turn(tmp_path, monkeypatch):
    """The routing only: the pytest runs are recorded, not run (each tier is a half-hour run; the test above
    runs real processes through the same Beside)."""
    calls: list[tuple[str, str]] = []

    class Recorder:
        def __init__(self):
            self.running: set[str] = set()

        def started(self, name):
            return name in self.running

        def start(self, name, argv, out, low_priority=False):
            calls.append(("start", name) + (("low",) if low_priority else ()))
            self.running.add(name)

        def finish(self, name):
            calls.append(("finish", name))
            self.running.discard(name)
            return 0

    monkeypatch.setattr(tasks.subprocess, "call", lambda argv, cwd=None: calls.append(("run", argv[4])) or 0)
    early = Recorder()
    for name in ["integration", "e2e", "node", "remote-engine-and-pipelines", "unit-pythons"]:
        assert tasks._tier(name, tmp_path, False, early) == 0
    marker = dict(tasks.TIERS)
    assert calls == [("start", "e2e"), ("run", marker["integration"]), ("finish", "e2e"),
                     ("start", "unit-pythons", "low"), ("run", marker["node"]),
                     ("run", marker["remote-engine-and-pipelines"]), ("finish", "unit-pythons")]
    argv = tasks._tier_argv("unit-pythons", tmp_path, False)
    assert argv[1:3] == ["-m", "testkit.pythons"] and "--one-at-a-time" in argv
