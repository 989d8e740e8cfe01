"""A real, local Kubernetes control plane: etcd + kube-apiserver as processes on 127.0.0.1.

No kind or minikube (no image can be pulled here) and no kubelet: Nodes are API
objects that callers create; pods get bound and nothing runs. What runs is real:
Debian's etcd and a kube-apiserver compiled by our own hermetic build, with
generated certificates (CA, serving, client), a service-account signing key and
issuer, RBAC authorization, and kubeconfigs for an admin (system:masters) and for
the scheduler's identity (user system:kube-scheduler, bound by the API server's
bootstrap RBAC).

Everything lives in one state directory (certificates, kubeconfigs, etcd data,
logs, state.json with the pids). `down()` stops the processes it recorded (and
only those: each pid is checked against its recorded start time, so a reused pid
is never signalled) and removes the directory, so nothing is left behind.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scheduler_build.errors import UserError
from scheduler_build.atomic import write_atomic
from scheduler_build.progress import log

STATE_FILE = "state.json"
# The service network only feeds the allocator of Service IPs; nothing routes it.
SERVICE_CIDR = "10.0.0.0/24"
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
CLUSTER_NAME = "scheduler-build"
# Admission plugins that need a controller or a kubelet this control plane does not
# run: ServiceAccount rejects pods until kube-controller-manager has created the
# namespace's `default` ServiceAccount, and TaintNodesByCondition taints every new
# Node not-ready until a kubelet reports Ready. Everything else stays on.
DISABLED_ADMISSION = ("ServiceAccount", "TaintNodesByCondition")


@dataclass
class ProcessRecord:
    name: str
    pid: int
    start_ticks: int  # /proc/<pid>/stat field 22: tells a reused pid from ours
    argv: list[str]
    log: str


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
    processes: dict[str, ProcessRecord] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict) -> "ClusterState":
        data = dict(data)
        data["processes"] = {k: ProcessRecord(**v) for k, v in data.get("processes", {}).items()}
        return cls(**data)


# --------------------------------------------------------------------------- ports


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- PKI


def _pem_key(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem_cert(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def generate_pki(directory: Path, extra_sans: tuple[str, ...] = ()) -> dict[str, Path]:
    """CA, apiserver serving cert, admin and scheduler client certs, service-account key pair.

    Returns the written paths by role. Keys are written 0600.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    not_before, not_after = now - dt.timedelta(hours=1), now + dt.timedelta(days=365)

    def name(cn: str, org: str | None = None) -> x509.Name:
        attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
        if org:
            attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
        return x509.Name(attrs)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("scheduler-build-ca")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(subject: x509.Name, usage: Any, sans: list[x509.GeneralName] | None = None) -> tuple[Any, Any]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
                              encipher_only=False, decipher_only=False),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    service_ip = str(next(ipaddress.ip_network(SERVICE_CIDR).hosts()))
    dns = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
           "kubernetes.default.svc.cluster.local"]
    ips = ["127.0.0.1", service_ip]
    for extra in extra_sans:
        try:
            ipaddress.ip_address(extra)
            ips.append(extra)
        except ValueError:
            dns.append(extra)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    serving = leaf(name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, sans)
    admin = leaf(name("scheduler-build-admin", "system:masters"), ExtendedKeyUsageOID.CLIENT_AUTH)
    scheduler = leaf(name("system:kube-scheduler"), ExtendedKeyUsageOID.CLIENT_AUTH)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    paths = {
        "ca.crt": directory / "ca.crt",
        "ca.key": directory / "ca.key",
        "apiserver.crt": directory / "apiserver.crt",
        "apiserver.key": directory / "apiserver.key",
        "admin.crt": directory / "admin.crt",
        "admin.key": directory / "admin.key",
        "scheduler.crt": directory / "scheduler.crt",
        "scheduler.key": directory / "scheduler.key",
        "sa.key": directory / "sa.key",
        "sa.pub": directory / "sa.pub",
    }
    write_atomic(paths["ca.crt"], _pem_cert(ca), 0o644)
    write_atomic(paths["ca.key"], _pem_key(ca_key), 0o600)
    for role, (key, cert) in (("apiserver", serving), ("admin", admin), ("scheduler", scheduler)):
        write_atomic(paths[f"{role}.crt"], _pem_cert(cert), 0o644)
        write_atomic(paths[f"{role}.key"], _pem_key(key), 0o600)
    write_atomic(paths["sa.key"], _pem_key(sa_key), 0o600)
    write_atomic(
        paths["sa.pub"],
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        0o644,
    )
    return paths


def kubeconfig(server: str, ca_pem: bytes, user: str, cert_pem: bytes | None = None,
               key_pem: bytes | None = None, token: str | None = None) -> dict:
    """A self-contained kubeconfig (data embedded, so it can be mounted into a container)."""
    import base64

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    creds: dict[str, str] = {}
    if cert_pem is not None and key_pem is not None:
        creds = {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}
    if token is not None:
        creds["token"] = token
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER_NAME, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": user, "user": creds}],
        "contexts": [{"name": CLUSTER_NAME, "context": {"cluster": CLUSTER_NAME, "user": user}}],
        "current-context": CLUSTER_NAME,
    }


def write_kubeconfig(path: Path, config: dict) -> Path:
    write_atomic(path, yaml.safe_dump(config, sort_keys=True), 0o600)
    return path


# --------------------------------------------------------------------------- processes


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces: split after its closing paren.
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None  # a zombie has finished: treat as gone
    return int(fields[19])


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child (started by another command): init reaps it


def alive(record: ProcessRecord) -> bool:
    _reap(record.pid)
    return _start_ticks(record.pid) == record.start_ticks


def spawn(name: str, argv: list[str], log_path: Path, env: dict[str, str] | None = None) -> ProcessRecord:
    """Start a long-running process in its own session, output appended to log_path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, env=env,
            )
        except OSError as exc:
            raise UserError(f"cannot start {name} ({argv[0]}): {exc.strerror}", "check the binary path and that it is executable") from None
    ticks = _start_ticks(proc.pid)
    # Popen keeps the child in its _active list once dropped, so it is reaped either
    # by us (os.waitpid in alive/stop) or by subprocess's own cleanup.
    return ProcessRecord(name=name, pid=proc.pid, start_ticks=ticks if ticks is not None else -1,
                         argv=[str(a) for a in argv], log=str(log_path))


def stop(record: ProcessRecord, grace: float = 15.0, sig: int = signal.SIGTERM) -> bool:
    """Signal one recorded process (its whole session) and wait for it; SIGKILL after `grace`.

    Returns True if it was running. A pid that now belongs to another process is left alone.
    """
    if not alive(record):
        return False
    try:
        os.killpg(record.pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        os.kill(record.pid, sig)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(record):
            return True
        time.sleep(0.1)
    try:
        os.killpg(record.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(100):
        if not alive(record):
            break
        time.sleep(0.05)
    return True


def log_tail(path: str | Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


# --------------------------------------------------------------------------- health


def _ssl_context(state: ClusterState) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=state.ca_file)
    pki = Path(state.state_dir) / "pki"
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return ctx


def _get(url: str, ctx: ssl.SSLContext | None, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def wait_http(url: str, record: ProcessRecord, timeout: float, ctx: ssl.SSLContext | None = None,
              what: str = "") -> str:
    """Poll url until it answers 200; fail early if the process exits."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not alive(record):
            log(log_tail(record.log))
            raise UserError(f"{what or record.name} exited during startup (log: {record.log})",
                            "its last log lines are above")
        try:
            code, body = _get(url, ctx)
            if code == 200:
                return body
            last = f"HTTP {code}: {body.strip().splitlines()[-1] if body.strip() else ''}"
        except (OSError, ssl.SSLError) as exc:
            last = str(getattr(exc, "reason", exc))
        time.sleep(0.5)
    log(log_tail(record.log))
    raise UserError(
        f"{what or record.name} not ready at {url} after {timeout:.0f}s ({last}; log: {record.log})",
        "the machine may be overloaded: raise --timeout (cluster.timeout)",
    )


# --------------------------------------------------------------------------- state


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


def _apiserver_argv(binary: str, state_dir: Path, etcd_url: str, port: int) -> list[str]:
    pki = state_dir / "pki"
    return [
        binary,
        f"--etcd-servers={etcd_url}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={state_dir / 'apiserver'}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        f"--service-account-issuer={SA_ISSUER}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--authorization-mode=RBAC",
        # Aggregation-layer request headers, so kube-system/extension-apiserver-authentication
        # is complete and delegated authentication (the scheduler's own endpoints) sees no gap.
        f"--requestheader-client-ca-file={pki / 'ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--disable-admission-plugins={','.join(DISABLED_ADMISSION)}",
        # The `kubernetes` Endpoints would carry 127.0.0.1, which validation rejects
        # (loopback); nothing here needs in-cluster discovery of the API server.
        "--endpoint-reconciler-type=none",
        "--profiling=false",
    ]


def _binary_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"cannot run {binary} --version: {exc}", "pass a kube-apiserver binary built for this machine") from None
    text = (out.stdout or out.stderr).strip()
    return text.split()[-1] if text else ""


def up(apiserver: Path, state_dir: Path, etcd: str = "/usr/bin/etcd", timeout: float = 180.0) -> ClusterState:
    """Start etcd and kube-apiserver on free 127.0.0.1 ports and wait for /readyz."""
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
        raise UserError(f"etcd not found at {etcd!r}", "apt-get install etcd-server (bash ci/setup.sh does), or set cluster.etcd")
    apiserver = Path(apiserver).resolve()
    if not os.access(apiserver, os.X_OK):
        raise UserError(f"kube-apiserver binary {apiserver} is missing or not executable",
                        "build it with `inv build --component kube-apiserver`, or omit --apiserver")

    state_dir.mkdir(parents=True, exist_ok=True)
    pki = generate_pki(state_dir / "pki")
    etcd_client, etcd_peer, api_port = free_port(), free_port(), free_port()
    while len({etcd_client, etcd_peer, api_port}) < 3:
        etcd_peer, api_port = free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    etcd_url = f"http://127.0.0.1:{etcd_client}"
    ca_pem = pki["ca.crt"].read_bytes()
    admin_kc = write_kubeconfig(state_dir / "admin.kubeconfig", kubeconfig(
        server, ca_pem, "scheduler-build-admin", pki["admin.crt"].read_bytes(), pki["admin.key"].read_bytes()))
    sched_kc = write_kubeconfig(state_dir / "scheduler.kubeconfig", kubeconfig(
        server, ca_pem, "system:kube-scheduler", pki["scheduler.crt"].read_bytes(), pki["scheduler.key"].read_bytes()))
    state = ClusterState(
        state_dir=str(state_dir), server=server, etcd_url=etcd_url, apiserver_port=api_port,
        etcd_client_port=etcd_client, etcd_peer_port=etcd_peer, apiserver_binary=str(apiserver),
        etcd_binary=etcd_path, admin_kubeconfig=str(admin_kc), scheduler_kubeconfig=str(sched_kc),
        ca_file=str(pki["ca.crt"]), version=_binary_version(str(apiserver)),
    )
    save_state(state)  # before any process starts, so `down` can always clean up
    logs = state_dir / "logs"
    try:
        etcd_rec = spawn("etcd", _etcd_argv(etcd_path, state_dir / "etcd", etcd_client, etcd_peer), logs / "etcd.log")
        state.processes["etcd"] = etcd_rec
        save_state(state)
        wait_http(f"{etcd_url}/health", etcd_rec, timeout, what="etcd")
        log(f"    etcd ready at {etcd_url}")
        start_apiserver(state, timeout)
    except BaseException:
        down(state_dir)
        raise
    return state


def start_apiserver(state: ClusterState, timeout: float = 180.0) -> ProcessRecord:
    """(Re)start kube-apiserver with the state's port and certificates; wait for /readyz."""
    argv = _apiserver_argv(state.apiserver_binary, Path(state.state_dir), state.etcd_url, state.apiserver_port)
    rec = spawn("kube-apiserver", argv, Path(state.state_dir) / "logs" / "kube-apiserver.log")
    state.processes["kube-apiserver"] = rec
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


def status(state_dir: Path) -> dict:
    """Which recorded processes run, and whether the API server answers /readyz."""
    state = load_state(Path(state_dir))
    if state is None:
        return {"state_dir": str(state_dir), "running": False}
    procs = {name: alive(rec) for name, rec in state.processes.items()}
    ready = False
    if procs.get("kube-apiserver"):
        try:
            ready = _get(f"{state.server}/readyz", _ssl_context(state))[0] == 200
        except (OSError, ssl.SSLError):
            ready = False
    return {
        "state_dir": state.state_dir, "running": all(procs.values()) and bool(procs), "ready": ready,
        "server": state.server, "version": state.version, "processes": procs,
        "admin_kubeconfig": state.admin_kubeconfig, "scheduler_kubeconfig": state.scheduler_kubeconfig,
    }
