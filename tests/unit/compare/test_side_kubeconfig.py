"""A side's API clients leave no temporary files, even in a process that ends without its atexit hooks (the
reference extender re-raises SIGTERM once drained; a signal's default action runs no atexit hook).

The kubernetes Python client writes a kubeconfig's embedded certificate data to tmp* files in TMPDIR and
removes them only at exit; the side's kubeconfig names the certificate files instead (compare/side.py). The
negative control is the control plane's own self-contained kubeconfig: the same client, the same exit, and
its files stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scheduler_build.cluster import pki as cluster_pki
from scheduler_build.cluster.controlplane import ClusterState
from scheduler_build.compare import side

REPO = Path(__file__).resolve().parents[3]
# A client made, then the process ends the way a signalled one does: no atexit hook runs.
CLIENT = "import os, sys; from scheduler_build import kubeclient; kubeclient.from_kubeconfig(sys.argv[1]); os._exit(0)"


def _state(tmp_path: Path) -> ClusterState:
    paths = cluster_pki.generate_pki(tmp_path / "cluster" / "pki")
    embedded = cluster_pki.write_kubeconfig(tmp_path / "cluster" / "admin.kubeconfig", cluster_pki.kubeconfig(
        "https://127.0.0.1:6443", paths["ca.crt"].read_bytes(), "admin", paths["admin.crt"].read_bytes(),
        paths["admin.key"].read_bytes()))
    return ClusterState(state_dir=str(tmp_path / "cluster"), server="https://127.0.0.1:6443", etcd_url="",
                        apiserver_port=6443, etcd_client_port=0, etcd_peer_port=0, apiserver_binary="", etcd_binary="",
                        admin_kubeconfig=str(embedded), scheduler_kubeconfig="", ca_file=str(paths["ca.crt"]))


def _left_in_tmpdir(kubeconfig: str, tmpdir: Path) -> list[str]:
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", CLIENT, kubeconfig], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return sorted(p.name for p in tmpdir.iterdir())


def test_the_sides_kubeconfig_leaves_no_temporary_file(tmp_path):
    state = _state(tmp_path)
    (tmp_path / "side").mkdir()
    assert _left_in_tmpdir(side._file_kubeconfig(state, tmp_path / "side"), tmp_path / "tmp-files") == []
    # The negative control: embedded certificate data leaves its tmp* files (CA, certificate, key).
    left = _left_in_tmpdir(state.admin_kubeconfig, tmp_path / "tmp-embedded")
    assert len(left) == 3 and all(name.startswith("tmp") for name in left), left
