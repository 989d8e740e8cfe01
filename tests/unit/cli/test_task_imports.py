"""`scheduler-build TASK` imports TASK's module only: its command line is parsed with the cached listing
(cli/listing.py), then the real tasks of that one module are put in place (cli/program.py). Each run is a
fresh process with its own cache directory, as a user's; the modules are read from that process.

Negative controls: with no listing cached every task module is imported (as before), and a listing that
no longer describes the task (stale) is not trusted, whichever way it is wrong: the command still does
what the real task says, and the listing is written anew."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "examples" / "underlay" / "scheduler.yaml"
RUN = ("import sys; from scheduler_build.cli.entry import main\n"
       "try:\n    main()\nfinally:\n"
       "    print('MODULES', *sorted(m for m in sys.modules if m.startswith('scheduler_build.commands.')), file=sys.stderr)")


def run(argv: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, set[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_BUILD_")}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", RUN, *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("MODULES"))
    return proc, {m.rsplit(".", 1)[1] for m in line.split()[1:]}


def render(tmp_path: Path, out: str, *extra: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    proc, modules = run(["config.render", str(SPEC), "--out", str(tmp_path / out), *extra], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, modules


def listing_file(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache" / "scheduler-build" / "cli-listing").glob("*.json")
    return found


def same_files(a: Path, b: Path) -> bool:
    return sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir()) and all(
        (a / p.name).read_bytes() == (b / p.name).read_bytes() for p in a.iterdir())


def test_a_task_imports_its_own_module_once_the_listing_is_cached(tmp_path):
    _, first = render(tmp_path, "first")
    assert {"cluster", "image", "compare", "extender", "config"} <= first  # no listing yet: every task's module
    _, second = render(tmp_path, "second")
    assert second == {"_common", "config"}
    assert same_files(tmp_path / "first", tmp_path / "second")


def _edit_listing(tmp_path: Path, change) -> None:
    """Make the cached listing describe config.render otherwise than the real task."""
    path = listing_file(tmp_path)
    data = json.loads(path.read_text())
    config = next(c for c in data["collections"] if c["name"] == "config")
    change(next(t for t in config["tasks"] if t["name"] == "render"))
    path.write_text(json.dumps(data))


def test_a_listing_that_lacks_a_flag_is_not_taken_for_the_users_mistake(tmp_path):
    render(tmp_path, "first")
    _edit_listing(tmp_path, lambda task: task.update(args=[a for a in task["args"] if a["names"][0] != "out"]))
    _, modules = render(tmp_path, "second")  # the listing cannot parse --out: the real tasks do
    assert same_files(tmp_path / "first", tmp_path / "second")
    assert "cluster" in modules  # parsed again with every task
    _, modules = render(tmp_path, "third")  # written anew: served from it again
    assert modules == {"_common", "config"}


def test_a_listing_with_another_default_is_not_used_to_run_the_task(tmp_path):
    render(tmp_path, "first")
    _edit_listing(tmp_path, lambda task: [a.update(default="elsewhere") for a in task["args"] if a["names"][0] == "out"])
    _, modules = render(tmp_path, "second")
    assert "cluster" in modules and same_files(tmp_path / "first", tmp_path / "second")
    assert not (tmp_path / "elsewhere").exists()
    _, modules = render(tmp_path, "third")
    assert modules == {"_common", "config"}


def test_a_mistake_is_still_one_line_and_leaves_the_listing_as_it_was(tmp_path):
    render(tmp_path, "first")
    before = listing_file(tmp_path).read_text()
    proc, _ = run(["config.render", str(SPEC), "--outt", str(tmp_path / "x")], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("error:")][0].count("--out") >= 1, proc.stderr
    assert listing_file(tmp_path).read_text() == before
