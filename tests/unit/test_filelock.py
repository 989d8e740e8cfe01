"""Processes that make the same thing take turns (scheduler_build/filelock.py), and `inv test`'s warm-up (testkit/warmup.py), whose builds take them.

Real processes, a real `go` for the tool build, real process groups; nothing is mocked."""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit import warmup

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO))

# Holds the tool directory's lock for a while, as a warm-up building the tool would, then leaves the tool built.
HOLDER = """
import sys, time
from pathlib import Path
from scheduler_build.filelock import turn
target = Path(sys.argv[1])
target.parent.mkdir(parents=True, exist_ok=True)
with turn(target.parent / ".lock", "building hello"):
    print("holding", flush=True)
    time.sleep(2)
    target.write_text("#!/bin/sh\\necho built by the holder\\n")
    target.chmod(0o755)
"""
# Asks for the tool the way a test does; "nolock" (the negative control) takes no turn.
ASKER = """
import contextlib, sys
from pathlib import Path
from scheduler_build.golang import gotool
if sys.argv[3] == "nolock":
    gotool.turn = lambda *a, **k: contextlib.nullcontext()
[built] = gotool._built_once([Path(sys.argv[1])], "hello", ["install", "-trimpath", "."], cwd=Path(sys.argv[2]))
print("the holder's" if built.read_bytes()[:2] == b"#!" else "a go build")
"""


def hello_module(tmp_path: Path) -> Path:
    module = tmp_path / "hello"
    module.mkdir()
    (module / "go.mod").write_text("module example.com/hello\n\ngo 1.22\n")
    (module / "main.go").write_text('package main\n\nfunc main() { println("built by go") }\n')
    return module


@pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (the negative control compiles)")
@pytest.mark.parametrize("lock", ["lock", "nolock"])
def test_a_tool_being_built_elsewhere_is_waited_for_not_built_twice(tmp_path, lock):
    target, module = tmp_path / "tools" / "hello-v1" / "hello", hello_module(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout.readline().strip() == "holding"
        asker = subprocess.run([sys.executable, "-c", ASKER, str(target), str(module), lock], capture_output=True,
                               text=True, env=ENV, timeout=300)
    finally:
        holder.wait(30)
    assert asker.returncode == 0, asker.stderr[-2000:]
    if lock == "lock":
        assert f"waiting for pid {holder.pid} " in asker.stderr and "it is building hello" in asker.stderr
        assert "building hello" not in asker.stderr.replace("it is building hello", "")
        assert asker.stdout.strip() == "the holder's"
    else:  # negative control: without the turn, the asker compiles a second copy beside the holder's build
        assert "waiting for" not in asker.stderr and "building hello" in asker.stderr
        assert asker.stdout.strip() == "a go build"


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


@pytest.mark.parametrize("how", ["stop", "terminate-only"])
def test_stop_ends_the_warm_up_and_every_child_it_started(how):
    # A leader that ignores nothing and a child in its group, like the warm-up and its `go install`.
    proc = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], preexec_fn=os.setpgrp)
    try:
        deadline = time.monotonic() + 10
        while len(group_members(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(group_members(proc.pid)) == 2
        if how == "stop":
            warmup.stop(proc)
            assert group_members(proc.pid) == []
        else:  # negative control: ending the leader alone leaves its child running
            proc.terminate()
            proc.wait(10)
            assert group_members(proc.pid) != []
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _callable_as_the_warmup_calls_it(target: str) -> bool:
    """`module:function` exists and takes exactly what warmup.builder passes (the cache directory for the
    product's, nothing for testkit's): a target that exists but cannot be called so fails here, not in CI."""
    import inspect

    module, function = target.split(":")
    found = getattr(importlib.import_module(module), function, None)
    if not callable(found):
        return False
    try:
        inspect.signature(found).bind(*(() if module.startswith("testkit.") else ("/cache",)))
    except TypeError:
        return False
    return True


def test_every_item_names_a_builder_that_exists():
    for what, target in warmup.TOOLS:
        assert _callable_as_the_warmup_calls_it(target), what
    # The negative controls: a function that exists but needs more than the cache directory (the issue's
    # `gotool:installed_tool` for helm), and one that does not exist.
    assert not _callable_as_the_warmup_calls_it("scheduler_build.golang.gotool:installed_tool")
    assert not _callable_as_the_warmup_calls_it("scheduler_build.config.chart:no_such_tool")
    assert [what for what, _ in warmup.ITEMS] == ["the oldest and newest Python's virtualenvs", "etcd",
                                                  *(what for what, _ in warmup.TOOLS)]
