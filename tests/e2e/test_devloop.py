"""`inv dev.run` end to end: a saved plugin edit rebuilds, restarts and re-takes the Lease.

Real everything: the control plane of the session, the hermetic build (incremental
after the edit), kube-scheduler as a host process, the Lease read from the API server.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[2]
CYCLE = re.compile(r"^cycle (\d+) (ok|failed) .*holder=(\S+)$")


def _holder(kube, namespace, name):
    from kubernetes import client as k

    return k.CoordinationV1Api(kube).read_namespaced_lease(name, namespace).spec.holder_identity


def test_dev_run_rebuilds_on_a_plugin_save_and_the_new_scheduler_takes_the_lease(control_plane, kube, tmp_path):
    shutil.copytree(ROOT / "examples/underlay", tmp_path / "underlay", ignore=shutil.ignore_patterns("vendor"))
    shutil.copytree(ROOT / "examples/patches", tmp_path / "patches")
    source = tmp_path / "underlay/plugin/pkg/underlayiplimit/underlayiplimit.go"
    errors = open(tmp_path / "dev.err", "w")  # a file: build output never fills a pipe
    proc = subprocess.Popen(
        [sys.executable, "-m", "scheduler_build", "dev.run", "--spec", str(tmp_path / "underlay/scheduler.yaml"),
         "--kubeconfig", control_plane.admin_kubeconfig, "--once"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, stderr=errors, text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        kobj.wait_until(lambda: any(line.startswith("cycle 0 ok") for line in lines) or proc.poll() is not None,
                        900, what="the first scheduler holding its lease")
        assert proc.poll() is None, (tmp_path / "dev.err").read_text()[-3000:]
        first = CYCLE.match(lines[0].strip())
        assert first and first.group(3) == _holder(kube, "underlay-system", "underlay-scheduler")
        time.sleep(1.5)  # past the watcher's first scan
        text = source.read_text()
        assert 'const stateKey fwk.StateKey = Name + "/prefilter"' in text
        source.write_text(text.replace('Name + "/prefilter"', 'Name + "/prefilter-dev"'))
        proc.wait(900)  # stdout is the reader thread's alone
    finally:
        if proc.poll() is None:
            proc.terminate()  # Ctrl-C's path: the task stops its scheduler on the way out
            proc.wait(60)
    reader.join(10)
    errors.close()
    err = (tmp_path / "dev.err").read_text()
    print("".join(lines), err[-2000:])  # shown with -rP: the measured cycle lines
    assert proc.returncode == 0, err
    second = CYCLE.match(lines[-1].strip())
    assert second and second.group(1) == "1" and second.group(2) == "ok", lines
    assert "changed=underlayiplimit.go" in lines[-1] and "save_to_lease=" in lines[-1]
    assert second.group(3) != first.group(3)
    assert "save -> lease held by the new scheduler" in err
    binaries = list((tmp_path / "dist").rglob("kube-scheduler"))
    assert binaries and all(b"UnderlayIPLimit/prefilter-dev" in b.read_bytes() for b in binaries)  # the edit is in
    assert not [line for line in subprocess.run(["pgrep", "-af", str(tmp_path)], capture_output=True,
                                                text=True).stdout.splitlines() if "kube-scheduler" in line]
