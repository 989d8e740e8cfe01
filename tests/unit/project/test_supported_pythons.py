"""The supported Pythons have one home, pyproject.toml's classifiers: requires-python starts at the
oldest, `inv test` runs the unit tests on the oldest and newest (testkit/pythons.py), and an end
that is missing on the machine is an error that names it, never a skip."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from testkit import pythons

PYPROJECT = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text()


def test_the_ends_are_3_10_and_3_13_and_requires_python_agrees():
    assert pythons.ends() == ["3.10", "3.13"]
    assert pythons.supported() == ["3.10", "3.11", "3.12", "3.13"]
    requires = re.search(r'^requires-python = "([^"]+)"', PYPROJECT, re.M).group(1)
    assert requires == f">={pythons.ends()[0]}"  # uncapped: see the comment in pyproject.toml


@pytest.mark.parametrize("minor", pythons.ends())
def test_each_end_is_found_as_that_very_version(minor):
    found = pythons.interpreter(minor)
    assert found is not None, f"Python {minor} not found (python{minor} on PATH or ~/.pyenv/versions/{minor}.*)"


def test_a_missing_python_is_an_error_naming_it(tmp_path):
    with pytest.raises(RuntimeError, match=r"Python 3\.99 not found .* pyproject.toml says 3\.99 is supported"):
        pythons.venv("3.99", tmp_path, print)
    assert not (tmp_path / "pythons").exists()


def test_a_new_virtualenv_replaces_this_checkouts_older_ones_and_those_of_checkouts_that_are_gone(tmp_path):
    other_checkout = tmp_path / "other-checkout"
    other_checkout.mkdir()
    made = {}
    for name, owner in (("3.13-old", pythons.REPO), ("3.13-other", other_checkout), ("3.13-unrecorded", None),
                        ("3.13-gone", tmp_path / "removed-act-workspace"), ("3.10-old", pythons.REPO),
                        ("3.13-new", pythons.REPO)):
        made[name] = tmp_path / "pythons" / name
        made[name].mkdir(parents=True)
        (made[name] / ".ready").write_text("/usr/bin/python3\n" + (f"{owner}\n" if owner else ""))
    (tmp_path / "pythons" / "3.13-gone.lock").write_text("")
    assert pythons.prune(tmp_path, "3.13", keep=made["3.13-new"]) == [made["3.13-gone"], made["3.13-old"]]
    assert sorted(p.name for p in (tmp_path / "pythons").iterdir()) == [
        "3.10-old", "3.13-new", "3.13-other", "3.13-unrecorded"]


# Each side writes its marker, then waits for the other's: it passes only when both run at the same time.
RENDEZVOUS = """
import sys, time
from pathlib import Path
me, other = Path(sys.argv[1]), Path(sys.argv[2])
me.write_text("here")
deadline = time.monotonic() + 20
while not other.exists():
    if time.monotonic() > deadline:
        print("the other run never started"); sys.exit(3)
    time.sleep(0.05)
print("1 passed in 0.1s"); sys.exit(int(sys.argv[3]))
"""


@pytest.mark.parametrize("second_exit", [0, 1])
def test_the_two_runs_go_at_once_and_a_failing_one_is_reported_with_its_output(tmp_path, second_exit):
    a, b = tmp_path / "a", tmp_path / "b"
    argvs = {"3.10": [sys.executable, "-c", RENDEZVOUS, str(a), str(b), "0"],
             "3.13": [sys.executable, "-c", RENDEZVOUS, str(b), str(a), str(second_exit)]}
    logs = {m: tmp_path / f"unit-python{m}.log" for m in argvs}
    said: list[str] = []
    code = pythons.run_at_once(argvs, {m: dict(os.environ) for m in argvs}, logs, tmp_path, said.append, every=0.5)
    assert code == second_exit, said
    assert logs["3.10"].read_text().strip() == "1 passed in 0.1s"
    assert ("python 3.13: FAILED (exit 1)" in said) == bool(second_exit) and "python 3.10: passed" in said, said
