"""Integration: a build stopped by SIGTERM (a CI cancel, `timeout`, a terminated pod) or SIGHUP leaves
nothing behind (no container, no process, no temporary directory), keeps the previous good output,
ends with one line and 143/129, and the next build succeeds. Real engine, real compile: the inputs
are the suite's plain kube-scheduler build (cached), so a stopped run costs a link at most."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TEST_K8S_MINOR
from scheduler_build.atomic import STAGING
from scheduler_build.engine import RUN_LABEL, connect

REPO = Path(__file__).resolve().parents[2]
BUILD = ["build", "--no-spec", "--no-pull", "--k8s-version", TEST_K8S_MINOR]


# These tests follow a compile's own container (the one-shot path, a remote engine's): the long-lived
# builder, the local default, is pinned off here and has its own test below.
ONE_SHOT = {"SCHEDULER_BUILD_BUILD_REUSE_BUILDER": "false"}


def _start(dist: Path, cwd: Path, env: dict[str, str] = ONE_SHOT) -> subprocess.Popen:
    def terminal_signals() -> None:  # as from a terminal: a background suite may hand children SIGINT ignored
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()  # its own session: every process it leaves behind is found by session id

    return subprocess.Popen([sys.executable, "-m", "scheduler_build", *BUILD, "--dist", str(dist)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=terminal_signals,
                            env=dict(os.environ, PYTHONPATH=str(REPO), **env))


def _containers_of(pid: int) -> list:
    engine = connect()
    label = f"{RUN_LABEL}={socket.gethostname()}/{pid}"
    return engine._client.containers.list(all=True, filters={"label": label})


def _session_members(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == sid:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _stop_when(proc: subprocess.Popen, moment: str, sig: int, timeout: float = 900) -> tuple[str, float]:
    """Send `sig` at `moment` ("resolve": the first phase line; "compile": once its container exists);
    returns the whole stderr and the seconds from the signal to the exit."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(f"==> {moment}"):
            break
    else:
        pytest.fail("the build ended before " + moment + ":\n" + "".join(seen)[-3000:])
    while moment == "compile" and not _containers_of(proc.pid):
        assert time.monotonic() < deadline and proc.poll() is None, "".join(seen)[-3000:]
        time.sleep(0.2)
    proc.send_signal(sig)
    sent = time.monotonic()
    rest = proc.communicate(timeout=300)[1]
    return "".join(seen) + rest, time.monotonic() - sent


def _previous_output(built_scheduler, dist: Path) -> Path:
    """A previous good output in `dist`: the suite's build copied there (its published layout, links kept),
    one byte longer, so this build's compile is not up to date and runs a container, and so the bytes a
    stopped build must keep are its own."""
    import shutil

    root = built_scheduler.binary.parents[3]
    shutil.copytree(root, dist, symlinks=True)
    binary = dist / built_scheduler.binary.relative_to(root)
    with open(binary, "ab") as handle:
        handle.write(b"\0")
    return binary


@pytest.mark.parametrize("moment, sig, status", [("compile", signal.SIGTERM, 143), ("resolve", signal.SIGHUP, 129)])
def test_a_stopped_build_leaves_nothing_and_the_next_one_succeeds(tmp_path, built_scheduler, moment, sig, status):
    dist = tmp_path / "dist"
    good = _previous_output(built_scheduler, dist)
    before = good.read_bytes()
    proc = _start(dist, tmp_path)
    try:
        stderr, seconds = _stop_when(proc, moment, sig)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == status, stderr[-3000:]
    assert stderr.splitlines()[-1] == f"terminated ({signal.Signals(sig).name}): the previous good state is kept"
    assert "Traceback" not in stderr
    assert _containers_of(proc.pid) == [], "the run's container was left behind"
    assert _session_members(proc.pid) == [], "a process of the run was left behind"
    assert [p for p in dist.rglob("*") if p.name.startswith((".tmp", STAGING))] == []
    assert good.read_bytes() == before
    print(f"stopped at {moment} by {signal.Signals(sig).name}: exited {seconds:.1f}s after the signal")
    again = subprocess.run([sys.executable, "-m", "scheduler_build", "-q", *BUILD, "--dist", str(dist)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert again.returncode == 0, again.stderr[-3000:]
    assert Path(again.stdout.strip()).read_bytes() == built_scheduler.binary.read_bytes()
    assert again.stderr == ""  # -q: errors and results only (the result is the path on stdout)


def test_image_build_stopped_while_assembling_leaves_no_staging_and_the_next_one_succeeds(tmp_path, built_scheduler):
    """One more long task: image.build, stopped once its staging directory exists (the layout half made)."""
    import shutil

    dist = tmp_path / "dist"
    shutil.copytree(built_scheduler.binary.parents[3], dist, symlinks=True)
    argv = [sys.executable, "-m", "scheduler_build", "image.build", "--no-spec", "--k8s-version", TEST_K8S_MINOR,
            "--dist", str(dist), "--force"]  # --force: an image of these inputs may already exist
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, signal.SIGINT)])
    deadline = time.monotonic() + 600
    try:
        while not list(dist.rglob(f"{STAGING}image-*")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        stderr = proc.communicate(timeout=300)[1]
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == 143 and stderr.splitlines()[-1].startswith("terminated (SIGTERM)"), stderr[-3000:]
    assert list(dist.rglob(f"{STAGING}*")) == [] and _containers_of(proc.pid) == []
    again = subprocess.run([*argv, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert list(dist.rglob(f"{STAGING}*")) == []


def test_after_a_sigkill_the_next_build_removes_the_orphan_before_it_compiles(tmp_path, built_scheduler):
    """SIGKILL skips every clean-up: the compile container is left running on the output. The next build
    of the same output removes it (under the output's lock) before its own compile: never beside it."""
    dist = tmp_path / "dist"
    _previous_output(built_scheduler, dist)
    proc = _start(dist, tmp_path)
    try:
        _stop_when(proc, "compile", signal.SIGKILL)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == -signal.SIGKILL and _containers_of(proc.pid), "the negative control: one is left"
    again = subprocess.run([sys.executable, "-m", "scheduler_build", *BUILD, "--dist", str(dist)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=900,
                           env=dict(os.environ, PYTHONPATH=str(REPO), **ONE_SHOT))
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"removing the compile container a stopped run ({socket.gethostname()}/{proc.pid})" in again.stderr
    assert _containers_of(proc.pid) == []


def _compiling_builders() -> list:
    """Long-lived builders (build/warm.py) with a `go build` running in them."""
    client = connect()._client
    found = []
    for container in client.containers.list(filters={"label": "io.scheduler-build.builder=1"}):
        try:
            processes = client.api.top(container.id).get("Processes") or []
        except Exception:  # noqa: BLE001 - removed meanwhile
            continue
        if any("go build" in " ".join(row) for row in processes):
            found.append(container.id)
    return found


def test_a_build_stopped_while_compiling_in_the_long_lived_builder_leaves_no_compile_running(tmp_path, built_scheduler):
    """The engine does not stop an exec whose client is gone: a SIGTERM'd build removes its builder (the
    next build starts a new one), so no compile of a stopped build runs on."""
    dist = tmp_path / "dist"
    good = _previous_output(built_scheduler, dist)
    before = good.read_bytes()
    proc = _start(dist, tmp_path, env={"SCHEDULER_BUILD_BUILD_REUSE_BUILDER": "true"})
    try:
        for line in proc.stderr:
            if line.startswith("==> compile"):
                break
        deadline = time.monotonic() + 900
        while not (compiling := _compiling_builders()):
            assert time.monotonic() < deadline and proc.poll() is None, "no compile started in a builder"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        stderr = proc.communicate(timeout=300)[1]
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == 143, stderr[-3000:]
    assert "Traceback" not in stderr
    assert not set(compiling) & set(_compiling_builders()), "the stopped build's compile runs on"
    assert good.read_bytes() == before
