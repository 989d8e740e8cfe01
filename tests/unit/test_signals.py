"""SIGTERM and SIGHUP end a task the way Ctrl-C does (scheduler_build/signals.py): the clean-up runs, one
line, 128 + the signal's number; and a second build of the same output says who holds it and waits.
Unit: real signals to real child processes, no Docker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A task body that holds a resource until stopped, through the same wrapper every task has.
TASK = """
import sys, time
from pathlib import Path
from scheduler_build import signals
from scheduler_build.commands._common import user_errors
from invoke.exceptions import Exit
signals.install()
marker = Path(sys.argv[1])
@user_errors
def body():
    try:
        marker.write_text("running")
        print("ready", flush=True)
        time.sleep(60)
    finally:
        marker.write_text("cleaned up")
try:
    body()
except Exit as exc:
    sys.exit(exc.code)
"""


def _default_signals() -> None:
    """As from a terminal: a suite run in the background may hand its children some signals ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig, status, word", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                               (signal.SIGHUP, 129, "terminated (SIGHUP)"),
                                               (signal.SIGINT, 130, "interrupted")])
def test_a_signal_runs_the_clean_up_and_ends_in_one_line(tmp_path, sig, status, word):
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-c", TASK, str(marker)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=_default_signals)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == status and marker.read_text() == "cleaned up"
    assert stderr == f"{word}: the previous good state is kept\n"


def test_the_negative_control_without_the_handler_sigterm_skips_the_clean_up(tmp_path):
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-c", TASK.replace("signals.install()", ""), str(marker)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=_default_signals)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM and marker.read_text() == "running"


def test_an_ignored_sighup_stays_ignored():
    code = ("import signal; signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
            "from scheduler_build import signals; signals.install()\n"
            "assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN\n"
            "assert signal.getsignal(signal.SIGTERM) is signals._handler\n")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))


HOLD = """
import sys, time
from pathlib import Path
from scheduler_build.build import compile
job = compile.Job(workspace=Path("w"), vendor=Path("v"), out_dir=Path("o"), gocache_volume="v", package="p",
                  binary_name="b", flags="", environment={}, overlays={}, test=False, state_dir=Path(sys.argv[1]))
with compile.output_lock(job, "k"):
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_a_second_build_of_the_same_output_names_the_holder_and_waits(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    first = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path), "3"], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert first.stdout.readline().strip() == "holding"
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-c", HOLD, str(tmp_path), "0"], capture_output=True, text=True,
                                env=env, timeout=60)
        waited = time.monotonic() - started
    finally:
        first.kill() if first.poll() is None else first.wait()
    assert f"waiting for pid {first.pid} " in second.stderr and "lock " in second.stderr
    assert second.stdout.strip() == "holding" and waited > 1.0  # it took its turn, not ran beside the first


def test_a_silent_step_says_it_is_alive_and_counts_packages(capsys):
    from scheduler_build import progress

    with progress.alive("compile", every=0.3) as state:
        for line in ("scheduler-build-packages-total 40", "internal/abi", "k8s.io/api/core/v1", "runtime"):
            assert state.take(line)
        assert not state.take("./main.go:3:1: undefined: x")  # a compiler message is printed, not counted
        progress._LAST[0] = 0.0  # long silent
        import time

        time.sleep(1.2)
    err = capsys.readouterr().err
    assert "    compile: 3/40 packages compiled, " in err and " elapsed" in err


def test_the_compile_command_counts_packages_and_keeps_the_recorded_argv():
    from scheduler_build.build import compile as compile_stage

    argv = compile_stage.go_build_command(".", "/out/x", "-s -w")
    command = compile_stage.with_progress(argv, ".")
    assert command[:2] == ["sh", "-c"] and "exec go build -v -trimpath" in command[2] and "go list -deps ." in command[2]
    test_argv = compile_stage.go_build_command("./x", "/out/x.test", "", test=True)
    assert compile_stage.with_progress(test_argv, "./x") == test_argv


GRANDCHILD = """
import subprocess, sys, time
from pathlib import Path
from scheduler_build import signals
from scheduler_build.commands._common import user_errors
from invoke.exceptions import Exit
signals.install()
@user_errors
def body():
    # A child that starts a grandchild and waits for it, as `go` runs the compiler.
    subprocess.run(["sh", "-c", "sleep 120 & echo $! > " + sys.argv[1] + "; wait"])
try:
    body()
except Exit as exc:
    sys.exit(exc.code)
"""


def test_a_signal_reaches_the_runs_grandchildren_too(tmp_path):
    pid_file = tmp_path / "grandchild"
    proc = subprocess.Popen([sys.executable, "-c", GRANDCHILD, str(pid_file)], stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    deadline = time.monotonic() + 10
    while _running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(grandchild), "the grandchild outlived the run"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
