"""A real, local Kubernetes control plane: etcd + kube-apiserver as processes on 127.0.0.1.

No kind or minikube (no image can be pulled here) and no kubelet: Nodes are API
objects that callers create; pods get bound and nothing runs. What runs is real:
Debian's etcd and a kube-apiserver compiled by our own hermetic build, with
generated certificates (`cluster.pki`), a service-account signing key and
issuer, RBAC authorization, and kubeconfigs for an admin (system:masters) and for
the scheduler's identity (user system:kube-scheduler, bound by the API server's
bootstrap RBAC). Processes are supervised by `cluster.processes`.

Everything lives in one state directory (certificates, kubeconfigs, etcd data,
logs, state.json with the pids). `down()` stops the processes it recorded (and
only those: each pid is checked against its recorded start time, so a reused pid
is never signalled) and removes the directory, so nothing is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import pki as cluster_pki
from scheduler_build.cluster.pki import SERVICE_CIDR
from scheduler_build.cluster.processes import ProcessRecord, alive, free_port, http_get, spawn, stop, wait_http
from scheduler_build.errors import UserError
from scheduler_build.progress import log

STATE_FILE = "state.json"
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
# Admission plugins that need a controller or a kubelet this control plane does not
# run: ServiceAccount rejects pods until kube-controller-manager has created the
# namespace's `default` ServiceAccount, and TaintNodesByCondition taints every new
# Node not-ready until a kubelet reports Ready. Everything else stays on.
DISABLED_ADMISSION = ("ServiceAccount", "TaintNodesByCondition")


@dataclass
class ClusterState:
    state_dir: str
    server: str
    etcd_url: str
    apiserver_port: int
    etcd_client_port: int
    etcd_peer_port: int
    apiserver_binary: str
    etcd_binary: str
    admin_kubeconfig: str
    scheduler_kubeconfig: str
    ca_file: str
    version: str = ""
    node_ip: str = ""  # set by `cluster.up --node`: the API server binds there, not on 127.0.0.1
    processes: dict[str, ProcessRecord] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict) -> "ClusterState":
        data = dict(data)
        data["processes"] = {k: ProcessRecord(**v) for k, v in data.get("processes", {}).items()}
        return cls(**data)


def _ssl_context(state: ClusterState) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=state.ca_file)
    pki = Path(state.state_dir) / "pki"
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return ctx


def load_state(state_dir: Path) -> ClusterState | None:
    path = Path(state_dir) / STATE_FILE
    if not path.is_file():
        return None
    try:
        return ClusterState.from_dict(json.loads(path.read_text()))
    except (ValueError, TypeError, KeyError) as exc:
        raise UserError(f"{path} is not a cluster state file ({exc})", f"remove {state_dir} by hand if no cluster runs") from None


def save_state(state: ClusterState) -> None:
    write_atomic(Path(state.state_dir) / STATE_FILE, state.to_json())


def _etcd_argv(etcd: str, data_dir: Path, client_port: int, peer_port: int) -> list[str]:
    client = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    return [
        etcd,
        "--name=scheduler-build",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=scheduler-build={peer}",
        "--initial-cluster-state=new",
        "--logger=zap",
        "--log-outputs=stderr",
    ]


def _node_flags(pki: Path, node_ip: str) -> list[str]:
    """With a real node: pods reach the API server on the node address (a dummy interface,
    never the machine's external one), ServiceAccount admission mounts their tokens, the
    `kubernetes` EndpointSlice is reconciled, and the API server dials the kubelet by its
    InternalIP with its own client certificate (logs, exec, port-forward)."""
    return [
        f"--bind-address={node_ip}",
        f"--advertise-address={node_ip}",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--endpoint-reconciler-type=lease",
        f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
        f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP",
    ]


_CONTROLPLANE_ONLY_FLAGS = [
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    "--authorization-mode=RBAC",
    f"--disable-admission-plugins={','.join(DISABLED_ADMISSION)}",
    # The `kubernetes` Endpoints would carry 127.0.0.1, which validation rejects
    # (loopback); nothing here needs in-cluster discovery of the API server.
    "--endpoint-reconciler-type=none",
]


def _apiserver_argv(binary: str, state_dir: Path, etcd_url: str, port: int, node_ip: str = "") -> list[str]:
    pki = state_dir / "pki"
    mode_flags = _node_flags(pki, node_ip) if node_ip else _CONTROLPLANE_ONLY_FLAGS
    return [
        binary,
        f"--etcd-servers={etcd_url}",
        *mode_flags,
        f"--secure-port={port}",
        f"--cert-dir={state_dir / 'apiserver'}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        f"--service-account-issuer={SA_ISSUER}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        # Aggregation-layer request headers, so kube-system/extension-apiserver-authentication
        # is complete and delegated authentication (the scheduler's own endpoints) sees no gap.
        f"--requestheader-client-ca-file={pki / 'ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--profiling=false",
    ]


def _binary_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"cannot run {binary} --version: {exc}", "pass a kube-apiserver binary built for this machine") from None
    text = (out.stdout or out.stderr).strip()
    return text.split()[-1] if text else ""


def up(apiserver: Path, state_dir: Path, *, etcd: str, timeout: float,
       node: tuple[str, str] | None = None) -> ClusterState:
    """Start etcd and kube-apiserver on free 127.0.0.1 ports and wait for /readyz.

    With `node` (name, IP on an interface cluster.network created), the API server
    serves on that IP for host clients and pods alike (see _node_flags)."""
    state_dir = Path(state_dir).resolve()
    existing = load_state(state_dir)
    if existing is not None:
        if any(alive(p) for p in existing.processes.values()):
            raise UserError(f"a cluster already runs from {state_dir} ({existing.server})",
                            "run `inv cluster.down` first, or pass another --state-dir")
        log(f"    removing the stale state of a stopped cluster in {state_dir}")
        shutil.rmtree(state_dir, ignore_errors=True)
    etcd_path = shutil.which(etcd) or etcd
    if not os.access(etcd_path, os.X_OK):
        raise UserError(f"etcd not found at {etcd!r}", "apt-get install -y etcd-server, or set cluster.etcd")
    apiserver = Path(apiserver).resolve()
    if not os.access(apiserver, os.X_OK):
        raise UserError(f"kube-apiserver binary {apiserver} is missing or not executable",
                        "build it with `inv build --component kube-apiserver`, or omit --apiserver")

    created, state = not state_dir.exists(), None
    try:
        state = _prepare(state_dir, apiserver, etcd_path, node)
        # One statement: the record is in the state as soon as spawn returns (no signal lands in between).
        state.processes["etcd"] = spawn("etcd", _etcd_argv(etcd_path, state_dir / "etcd", state.etcd_client_port,
                                                           state.etcd_peer_port), state_dir / "logs" / "etcd.log")
        save_state(state)
        wait_http(f"{state.etcd_url}/health", state.processes["etcd"], timeout, what="etcd")
        log(f"    etcd ready at {state.etcd_url}")
        start_apiserver(state, timeout)
    except BaseException:
        # Failed or stopped (Ctrl-C, SIGTERM) at any point, certificates included: what this run started
        # and wrote goes, so a stopped `cluster.up` leaves neither a process nor a half-made state directory.
        for record in (state.processes.values() if state is not None else ()):
            stop(record)  # the records in memory: one started just before the signal may not be saved yet
        if load_state(state_dir) is not None:
            down(state_dir)
        elif created:
            shutil.rmtree(state_dir, ignore_errors=True)
        raise
    return state


def _prepare(state_dir: Path, apiserver: Path, etcd_path: str, node: tuple[str, str] | None) -> ClusterState:
    """The state directory: certificates, kubeconfigs, ports, and the state file (before any process starts,
    so `down` can always clean up)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    node_ip = node[1] if node else ""
    pki = cluster_pki.generate_pki(state_dir / "pki", (node_ip,) if node_ip else (), node)
    etcd_client, etcd_peer, api_port = free_port(), free_port(), free_port()
    while len({etcd_client, etcd_peer, api_port}) < 3:
        etcd_peer, api_port = free_port(), free_port()
    server = f"https://{node_ip or '127.0.0.1'}:{api_port}"
    ca_pem = pki["ca.crt"].read_bytes()
    admin_kc = cluster_pki.write_kubeconfig(state_dir / "admin.kubeconfig", cluster_pki.kubeconfig(
        server, ca_pem, "scheduler-build-admin", pki["admin.crt"].read_bytes(), pki["admin.key"].read_bytes()))
    sched_kc = cluster_pki.write_kubeconfig(state_dir / "scheduler.kubeconfig", cluster_pki.kubeconfig(
        server, ca_pem, "system:kube-scheduler", pki["scheduler.crt"].read_bytes(), pki["scheduler.key"].read_bytes()))
    state = ClusterState(
        state_dir=str(state_dir), server=server, etcd_url=f"http://127.0.0.1:{etcd_client}", apiserver_port=api_port,
        etcd_client_port=etcd_client, etcd_peer_port=etcd_peer, apiserver_binary=str(apiserver),
        etcd_binary=etcd_path, admin_kubeconfig=str(admin_kc), scheduler_kubeconfig=str(sched_kc),
        ca_file=str(pki["ca.crt"]), version=_binary_version(str(apiserver)), node_ip=node_ip,
    )
    save_state(state)
    return state


def start_apiserver(state: ClusterState, timeout: float = 180.0) -> ProcessRecord:
    """(Re)start kube-apiserver with the state's port and certificates; wait for /readyz."""
    argv = _apiserver_argv(state.apiserver_binary, Path(state.state_dir), state.etcd_url, state.apiserver_port,
                           state.node_ip)
    state.processes["kube-apiserver"] = rec = spawn("kube-apiserver", argv,
                                                    Path(state.state_dir) / "logs" / "kube-apiserver.log")
    save_state(state)
    wait_http(f"{state.server}/readyz", rec, timeout, ctx=_ssl_context(state), what="kube-apiserver")
    log(f"    kube-apiserver {state.version} ready at {state.server}")
    return rec


def restart_apiserver(state_dir: Path, timeout: float = 180.0, down_seconds: float = 0.0) -> ClusterState:
    """Stop kube-apiserver, optionally stay down a while, start it again on the same port."""
    state = load_state(Path(state_dir))
    if state is None:
        raise UserError(f"no cluster state in {state_dir}", "run `inv cluster.up` first")
    rec = state.processes.get("kube-apiserver")
    if rec is not None:
        stop(rec)
    if down_seconds:
        time.sleep(down_seconds)
    start_apiserver(state, timeout)
    return state


def down(state_dir: Path) -> list[str]:
    """Stop the recorded processes (apiserver first), then remove the state directory."""
    state_dir = Path(state_dir).resolve()
    stopped: list[str] = []
    state = load_state(state_dir)
    if state is not None:
        order = sorted(state.processes.values(), key=lambda r: r.name != "kube-apiserver")
        for record in order:
            if stop(record):
                stopped.append(record.name)
    elif not state_dir.exists():
        return stopped
    elif any(state_dir.iterdir()):
        raise UserError(f"{state_dir} exists but holds no {STATE_FILE}",
                        "not a cluster state directory: remove it by hand if it is yours")
    shutil.rmtree(state_dir, ignore_errors=True)
    return stopped


@dataclass(frozen=True)
class Status:
    """`cluster.status`: which recorded processes run, and whether the API server answers /readyz."""

    state_dir: str
    running: bool
    recorded: bool  # a state file exists (nothing else is known without one)
    ready: bool = False
    server: str = ""
    version: str = ""
    processes: dict[str, bool] = field(default_factory=dict)
    admin_kubeconfig: str = ""
    scheduler_kubeconfig: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON `cluster.status` prints (without a state file: the directory and running only)."""
        if not self.recorded:
            return {"state_dir": self.state_dir, "running": self.running}
        return {"state_dir": self.state_dir, "running": self.running, "ready": self.ready, "server": self.server,
                "version": self.version, "processes": dict(self.processes),
                "admin_kubeconfig": self.admin_kubeconfig, "scheduler_kubeconfig": self.scheduler_kubeconfig}


def status(state_dir: Path) -> Status:
    """Which recorded processes run, and whether the API server answers /readyz."""
    state = load_state(Path(state_dir))
    if state is None:
        return Status(state_dir=str(state_dir), running=False, recorded=False)
    procs = {name: alive(rec) for name, rec in state.processes.items()}
    ready = False
    if procs.get("kube-apiserver"):
        try:
            ready = http_get(f"{state.server}/readyz", _ssl_context(state))[0] == 200
        except (OSError, ssl.SSLError):
            ready = False
    return Status(state_dir=state.state_dir, running=all(procs.values()) and bool(procs), recorded=True, ready=ready,
                  server=state.server, version=state.version, processes=procs,
                  admin_kubeconfig=state.admin_kubeconfig, scheduler_kubeconfig=state.scheduler_kubeconfig)