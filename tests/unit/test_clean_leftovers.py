"""`clean` removes our leftovers and only ours: the staging directory of a build that is gone (never a
running one's), a directory whose every file is as our record says (a chart, a plain rendering), not
one the user changed. Unit: the file system only."""

from __future__ import annotations

import os
import subprocess
import sys

from scheduler_build import clean
from scheduler_build.config import chart, output
from scheduler_build import spec as spec_mod
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FULL = REPO / "tests" / "data" / "config" / "specs" / "intree-full.yaml"


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_staging_of_a_stopped_build_is_ours_and_a_running_ones_is_not(tmp_path):
    platform_dir = tmp_path / "dist" / "kube-scheduler" / "v1.36.3"
    stopped = platform_dir / f".tmp-linux-amd64-p{_dead_pid()}-abcd_123"
    running = platform_dir / f".tmp-linux-amd64-p{os.getpid()}-efgh_456"
    older = platform_dir / ".tmp-linux-amd64-ijkl_789"  # before staging names carried the pid
    users = platform_dir / ".tmp-notes"
    for directory in (stopped, running, older, users):
        directory.mkdir(parents=True)
        (directory / "kube-scheduler").write_bytes(b"x" * 10)
    planned = {item.name for item in clean.plan_dist(tmp_path / "dist")}
    assert planned == {str(stopped), str(older)}
    for item in clean.plan_dist(tmp_path / "dist"):
        clean.remove(item, dist_dir=tmp_path / "dist")
    assert running.is_dir() and users.is_dir() and not stopped.exists() and not older.exists()


def test_a_chart_of_ours_is_cleaned_and_one_the_user_changed_is_kept(tmp_path):
    dist = tmp_path / "dist"
    files = chart.chart_files(spec_mod.load(FULL), "r/x:1")
    output.write(files, dist / "chart" / "a", chart.CHART_NAMES, plain=True)
    output.write(files, dist / "chart" / "b", chart.CHART_NAMES, plain=True)
    (dist / "chart" / "b" / "values.yaml").write_text("mine: true\n")
    (dist / "chart" / "c").mkdir()
    (dist / "chart" / "c" / "values.yaml").write_text(files["values.yaml"])  # same bytes, no record: not ours
    planned = clean.plan_dist(dist)
    assert [item.name for item in planned] == [str(dist / "chart" / "a")]
    clean.remove(planned[0], dist_dir=dist)
    assert not (dist / "chart" / "a").exists() and (dist / "chart" / "b" / "values.yaml").is_file()
    assert (dist / "chart" / "c" / "values.yaml").is_file()
