"""e2e: `cluster.up` stopped by SIGTERM at several moments leaves nothing behind: no etcd or kube-apiserver
(each runs in a session of its own, so only the run's own clean-up can end them), no state directory
(certificates, kubeconfigs, etcd data, logs), nothing in its TMPDIR; it ends with one line and 143,
and the next `cluster.up` of the same state directory starts a cluster that answers.

Real parts: Debian's etcd and the kube-apiserver of our own hermetic build (built_apiserver).
Negative control, run by hand: with the state directory prepared before the clean-up's `try` (as before
this test), the run stopped at "certificates" leaves the state directory behind and this case fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO
from testkit.stopped import Run, one_line_end


@pytest.mark.parametrize("moment", ["certificates", "etcd", "kube-apiserver"])
def test_a_stopped_cluster_up_leaves_nothing_and_the_next_one_starts(built_apiserver, tmp_path, moment):
    state = tmp_path / "cluster"
    argv = ["-m", "invoke", "cluster.up", "--apiserver", str(built_apiserver.binary), "--state-dir", str(state),
            "--timeout", "300"]
    run = Run(argv, REPO)
    try:
        if moment == "certificates":
            run.wait_line("==> cluster up")
        else:  # the process started and not ready yet: the run waits on its health endpoint
            run.wait_until(f"{moment} running", lambda: run.running(moment), timeout=300)
        seconds = run.stop(signal.SIGTERM)
        assert run.proc.returncode == 143, run.stderr()[-3000:]
        one_line_end(run.stderr())
        assert run.leftovers(tmp_path) == []
        assert not state.exists(), sorted(str(p) for p in state.rglob("*"))[:20]
        print(f"cluster.up stopped at {moment}: exited {seconds:.1f}s after SIGTERM")
    finally:
        run.close()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    up = subprocess.run([sys.executable, *argv, "--json"], cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        status = subprocess.run([sys.executable, "-m", "invoke", "cluster.status", "--state-dir", str(state)],
                                cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
        assert status.returncode == 0 and json.loads(status.stdout)["ready"] is True, status.stdout + status.stderr[-2000:]
        assert json.loads(up.stdout)["processes"].keys() == {"etcd", "kube-apiserver"}
    finally:
        down = subprocess.run([sys.executable, "-m", "invoke", "cluster.down", "--state-dir", str(state)], cwd=REPO,
                              capture_output=True, text=True, timeout=120, env=env)
        assert down.returncode == 0, down.stderr[-3000:]
    assert not state.exists()
