"""Cluster DNS for the node: CoreDNS as a host process on the node address, serving cluster.local.

CoreDNS (github.com/coredns/coredns at COREDNS_VERSION) is compiled once from
the Go module proxy with the host Go (static, stripped) and cached under
<cache>/node. It binds NODE_IP:53 only (never the machine's interfaces); the
kubelet's `clusterDNS` points pods at it; names outside cluster.local are
forwarded to the machine's own resolver.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from scheduler_build import gotool, templating
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import network

COREDNS_MODULE = "github.com/coredns/coredns"
COREDNS_VERSION = "v1.15.0"


def binary(cache_dir: Path) -> Path:
    """The cached CoreDNS binary, built on first use (`go install module@version`, proxy only)."""
    target = Path(cache_dir) / "node" / f"coredns-{COREDNS_VERSION}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="coredns-") as tmp:
        # Static (CGO off) whatever the caller's environment says: it runs on the node.
        gotool.check(["install", "-trimpath", "-ldflags", "-s -w", f"{COREDNS_MODULE}@{COREDNS_VERSION}"],
                     what=f"building CoreDNS {COREDNS_VERSION}", timeout=1800,
                     env={"CGO_ENABLED": "0", "GOBIN": tmp})
        shutil.move(str(Path(tmp) / "coredns"), target)
    return target


def corefile(kubeconfig: Path, health_port: int, ready_port: int) -> str:
    return templating.render("node/Corefile.j2", node_ip=network.NODE_IP, kubeconfig=str(kubeconfig),
                             health_port=health_port, ready_port=ready_port)


def write_corefile(directory: Path, kubeconfig: Path, health_port: int, ready_port: int) -> Path:
    path = directory / "Corefile"
    write_atomic(path, corefile(kubeconfig, health_port, ready_port))
    return path
