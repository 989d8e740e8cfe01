"""Cluster DNS for the node: CoreDNS as a host process on the node address, serving cluster.local.

CoreDNS (github.com/coredns/coredns at COREDNS_VERSION) is compiled once from
the Go module proxy with the host Go (static, stripped) and cached under
<cache>/tools like every Go tool (gotool.installed_programs). It binds
NODE_IP:53 only (never the machine's interfaces); the kubelet's `clusterDNS` points pods at it; names outside cluster.local are
forwarded to the machine's own resolver.
"""

from __future__ import annotations

from pathlib import Path

from scheduler_build import templating
from scheduler_build.golang import gotool
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import network

COREDNS_MODULE = "github.com/coredns/coredns"
COREDNS_VERSION = "v1.15.0"


def binary(cache_dir: Path) -> Path:
    """The cached CoreDNS binary, built on first use (`go install module@version`, proxy only)."""
    return gotool.installed_programs(cache_dir, "coredns", COREDNS_VERSION, [COREDNS_MODULE], ldflags="-s -w")[0]


def corefile(kubeconfig: Path, health_port: int, ready_port: int) -> str:
    return templating.render("node/Corefile.j2", node_ip=network.NODE_IP, kubeconfig=str(kubeconfig),
                             health_port=health_port, ready_port=ready_port)


def write_corefile(directory: Path, kubeconfig: Path, health_port: int, ready_port: int) -> Path:
    path = directory / "Corefile"
    write_atomic(path, corefile(kubeconfig, health_port, ready_port))
    return path
