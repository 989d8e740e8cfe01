"""`cluster.up --node`: one real node on the local control plane, and its complete teardown.

Order of `up`: check the machine's ranges, take the machine-wide lock, record
what exists already (iptables chains, the kubelet's hard-coded paths), create the
node's dummy interface, start the control plane on that address, then
containerd (own socket) + the locally built pause image, the kubelet, kube-proxy
(iptables) and kube-controller-manager, each waited for. `down` undoes it in
reverse, by PID, and removes every trace (see cluster.hosttraces and
cluster.network); a failed `up` runs the same `down`.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from scheduler_build import kubeclient
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import containerd, controlplane, dns, hosttraces, network, pull_hosts
from scheduler_build.cluster import node_config as cfg
from scheduler_build.cluster.processes import ProcessRecord, alive, free_port, spawn, stop, wait_http
from scheduler_build.errors import UserError
from scheduler_build.progress import log

NODE_FILE = "node/node.json"
# kube-scheduler: the cluster's default scheduler (plain build), for every pod that names
# no custom scheduler, the custom scheduler's own pod included.
COMPONENTS = ("kubelet", "kube-proxy", "kube-controller-manager", "kube-scheduler")


@dataclass
class NodeState:
    name: str
    ip: str
    binaries: dict[str, str]
    iptables_before: dict = field(default_factory=dict)
    outside_before: list[str] = field(default_factory=list)
    registries: list[str] = field(default_factory=list)  # servers the node pulls from (pull_hosts.py)
    processes: dict[str, ProcessRecord] = field(default_factory=dict)

    def save(self, state_dir: Path) -> None:
        write_atomic(state_dir / NODE_FILE, json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")


def load(state_dir: Path) -> NodeState | None:
    try:
        data = json.loads((Path(state_dir) / NODE_FILE).read_text())
    except (OSError, ValueError):
        return None
    data["processes"] = {k: ProcessRecord(**v) for k, v in data.get("processes", {}).items()}
    return NodeState(**data)


def running(state_dir: Path) -> bool:
    state = load(state_dir)
    return state is not None and any(alive(p) for p in state.processes.values())


def _wait(check: Callable[[], bool], record: ProcessRecord, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(record):
            raise UserError(f"{record.name} exited while waiting for {what} (log: {record.log})", "its log says why")
        try:
            if check():
                return
        except Exception:  # the API or socket is not answering yet: keep polling
            pass
        time.sleep(0.5)
    raise UserError(f"{what} not reached after {timeout:.0f}s (log: {record.log})",
                    "the machine may be overloaded: raise --timeout (cluster.timeout)")


def _node_ready(api) -> bool:
    node = api.read_node(cfg.NODE_NAME)
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def _controllers_ready(api) -> bool:
    api.read_namespaced_service_account("default", "default")
    api.read_namespaced_config_map("kube-root-ca.crt", "default")
    return True


def _insecure():
    """The default scheduler's self-signed healthz: reachability is all that is checked."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return ctx


def _start(state: NodeState, state_dir: Path, name: str, argv: list[str]) -> ProcessRecord:
    rec = spawn(name, argv, state_dir / "logs" / f"{name}.log")
    state.processes[name] = rec
    state.save(state_dir)
    return rec


def _start_components(state: NodeState, cp: controlplane.ClusterState, cache_dir: Path, timeout: float) -> None:
    from kubernetes import client as k8s  # optional: heavy, only when a cluster runs

    sd = Path(cp.state_dir)
    node_dir, ctd_dir = sd / "node", sd / "node" / "containerd"
    rec = containerd.start(ctd_dir, sd / "logs", state.binaries)
    state.processes["containerd"] = rec
    state.save(sd)
    _wait(lambda: containerd.ctr(ctd_dir, "version", check=False).count("Version") >= 2, rec, timeout, "containerd's socket")
    containerd.import_pause(ctd_dir, cache_dir)
    api = k8s.CoreV1Api(kubeclient.from_kubeconfig(cp.admin_kubeconfig))

    hosttraces.make_cgroups(cfg.CGROUP_ROOT)
    kubelet_yaml = cfg.write_yaml(node_dir / "kubelet.yaml", cfg.kubelet_config(sd, containerd.socket(ctd_dir), free_port()))
    kubelet_kc = cfg.component_kubeconfig(sd, cp.server, "kubelet", f"system:node:{cfg.NODE_NAME}")
    rec = _start(state, sd, "kubelet", cfg.kubelet_argv(state.binaries["kubelet"], sd, kubelet_yaml, kubelet_kc))
    _wait(lambda: _node_ready(api), rec, timeout, f"node {cfg.NODE_NAME} Ready")
    log(f"    node {cfg.NODE_NAME} Ready at {state.ip}")

    health, metrics = free_port(), free_port()
    proxy_kc = cfg.component_kubeconfig(sd, cp.server, "kube-proxy", "system:kube-proxy")
    proxy_yaml = cfg.write_yaml(node_dir / "kube-proxy.yaml", cfg.kube_proxy_config(proxy_kc, health, metrics))
    rec = _start(state, sd, "kube-proxy", [state.binaries["kube-proxy"], f"--config={proxy_yaml}", "--v=1"])
    wait_http(f"http://127.0.0.1:{health}/healthz", rec, timeout, what="kube-proxy")

    kcm_kc = cfg.component_kubeconfig(sd, cp.server, "controller-manager", "system:kube-controller-manager")
    argv = cfg.controller_manager_argv(state.binaries["kube-controller-manager"], sd, kcm_kc, free_port())
    rec = _start(state, sd, "kube-controller-manager", argv)
    _wait(lambda: _controllers_ready(api), rec, timeout, "the default ServiceAccount and kube-root-ca.crt")
    port = free_port()
    rec = _start(state, sd, "kube-scheduler", cfg.default_scheduler_argv(state.binaries["kube-scheduler"], cp.scheduler_kubeconfig, port))
    wait_http(f"https://127.0.0.1:{port}/healthz", rec, timeout, ctx=_insecure(), what="kube-scheduler")
    log("    kube-proxy, kube-controller-manager and the default kube-scheduler ready")
    health, ready = free_port(), free_port()
    # CoreDNS lists Services, EndpointSlices, Namespaces and Pods cluster-wide; it reads
    # the admin kubeconfig (a host process run by root, like the control plane itself).
    corefile = dns.write_corefile(node_dir, Path(cp.admin_kubeconfig), health, ready)
    rec = _start(state, sd, "coredns", [state.binaries["coredns"], "-conf", str(corefile)])
    wait_http(f"http://127.0.0.1:{ready}/ready", rec, timeout, what="CoreDNS")
    log(f"    CoreDNS serving cluster.local at {network.NODE_IP}:53")


def up(apiserver: Path, binaries: dict[str, Path], state_dir: Path, cache_dir: Path, etcd: str,
       timeout: float, pull_from: list[pull_hosts.NodeRegistry] | None = None) -> controlplane.ClusterState:
    """Control plane on the node address plus one node; everything is torn down if a step fails."""
    state_dir = Path(state_dir).resolve()
    if os.geteuid() != 0:
        raise UserError("a node needs root (network interfaces, iptables, cgroups)", "run as root; see `inv doctor --node`")
    network.check_ranges()
    hosttraces.acquire_lock(state_dir, running)
    state = NodeState(name=cfg.NODE_NAME, ip=network.NODE_IP, binaries={k: str(v) for k, v in binaries.items()},
                      iptables_before=network.snapshot(), outside_before=hosttraces.existing_outside(),
                      registries=[r.server for r in pull_from or []])
    try:
        # Before anything of ours exists: a failed check must not tear down what another
        # node (or a crashed one) left, which `inv cluster.down` for that node removes.
        network.create_dummy()
    except BaseException:
        hosttraces.release_lock(state_dir)
        raise
    try:
        cp = controlplane.up(apiserver, state_dir, etcd=etcd, timeout=timeout, node=(cfg.NODE_NAME, network.NODE_IP))
        state.save(state_dir)
        pull_hosts.write(state_dir / "node" / "containerd" / "certs.d", pull_from or [])
        _start_components(state, cp, cache_dir, timeout)
    except BaseException:
        log("    node start failed: tearing everything down")
        _teardown(state, state_dir)
        controlplane.down(state_dir)
        raise
    return cp


def _drain(state: NodeState, state_dir: Path) -> None:
    """Delete every pod while the kubelet runs, so CNI DEL removes their network rules."""
    cp = controlplane.load_state(state_dir)
    kubelet = state.processes.get("kubelet")
    if cp is None or kubelet is None or not alive(kubelet):
        return
    try:
        from kubernetes import client as k8s  # optional: heavy, only when a cluster runs

        api = k8s.CoreV1Api(kubeclient.from_kubeconfig(cp.admin_kubeconfig))
        for pod in api.list_pod_for_all_namespaces().items:
            api.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
    except Exception as exc:  # the API may be down already: the brute-force steps below still run
        log(f"    could not delete pods through the API ({type(exc).__name__}); killing their tasks instead")
        return
    ctd_dir = state_dir / "node" / "containerd"
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline and len(containerd.ctr(ctd_dir, "tasks", "ls", "-q", check=False).split()):
        time.sleep(1)


def _kill_shims(ctd_dir: Path) -> None:
    """Shims started by this containerd (their command line names its socket) outlive it."""
    sock = str(containerd.socket(ctd_dir))
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit():
            continue
        try:
            argv = (pid_dir / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"containerd-shim-runc-v2") and sock.encode() in argv:
            try:
                os.kill(int(pid_dir.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _teardown(state: NodeState, state_dir: Path) -> list[str]:
    stopped = []
    for name in ("kube-controller-manager", "kube-scheduler", "coredns"):
        if name in state.processes and stop(state.processes[name]):
            stopped.append(name)
    _drain(state, state_dir)
    for name in ("kubelet", "kube-proxy"):
        if name in state.processes and stop(state.processes[name]):
            stopped.append(name)
    proxy_yaml = state_dir / "node" / "kube-proxy.yaml"
    if proxy_yaml.is_file() and "kube-proxy" in state.binaries:
        subprocess.run([state.binaries["kube-proxy"], "--cleanup", f"--config={proxy_yaml}"], capture_output=True, timeout=120)
    ctd_dir = state_dir / "node" / "containerd"
    if "containerd" in state.processes and alive(state.processes["containerd"]):
        containerd.kill_tasks(ctd_dir)
        stop(state.processes["containerd"])
        stopped.append("containerd")
    _kill_shims(ctd_dir)
    hosttraces.unmount_under(state_dir)
    hosttraces.remove_cgroups(cfg.CGROUP_ROOT)
    network.remove_chains(state.iptables_before)
    network.delete_links()
    hosttraces.remove_outside(state.outside_before)
    hosttraces.release_lock(state_dir)
    return stopped


def down(state_dir: Path) -> list[str]:
    """Tear the node down (if the state has one), then the control plane."""
    state_dir = Path(state_dir).resolve()
    state = load(state_dir)
    stopped = _teardown(state, state_dir) if state is not None else []
    return stopped + controlplane.down(state_dir)


def restart(state_dir: Path, name: str) -> ProcessRecord:
    """Stop one node component by its PID and start it again with the same command line and log
    (a kubelet restart: the pods keep running under containerd meanwhile); `down` stops the new one."""
    state_dir = Path(state_dir).resolve()
    state = load(state_dir)
    if state is None or name not in state.processes:
        raise UserError(f"{state_dir} has no node component {name}", "start the node first: inv cluster.up --node")
    old = state.processes[name]
    stop(old)
    return _start(state, state_dir, name, old.argv)


def status(state_dir: Path) -> dict:
    state = load(state_dir)
    if state is None:
        return {}
    procs = {name: alive(rec) for name, rec in state.processes.items()}
    return {"name": state.name, "ip": state.ip, "processes": procs, "registries": state.registries,
            "running": bool(procs) and all(procs.values())}
