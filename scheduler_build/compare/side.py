"""One side of a comparison on its own fresh control plane: etcd + kube-apiserver (cluster.controlplane),
the snapshot's objects, the side's kube-scheduler (and the reference extender when its configuration calls
it) as local processes, the pods, the outcomes. Everything it starts is stopped and its directory removed
on the way out, also on Ctrl-C or SIGTERM (signals.py makes SIGTERM take Ctrl-C's path)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scheduler_build import kubeclient
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import controlplane, processes
from scheduler_build.compare import replay as replay_mod
from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.errors import UserError
from scheduler_build.progress import log

EXTENDER_MARK = "scheduler-build-reference-extender"  # urlPrefix placeholder the flow puts in a side's config


@dataclass(frozen=True)
class SideRun:
    """What to run: decided by the flow from the side's inputs and its build."""

    label: str
    binary: Path
    config: dict  # the KubeSchedulerConfiguration (one profile; clientConnection filled in here)
    scheduler_name: str
    apiserver: Path
    etcd: str
    workdir: Path  # fresh; removed at the end
    timeout: float
    reference_extender: bool  # start it and point EXTENDER_MARK entries at it


@dataclass
class SideResult:
    label: str
    version: str  # the scheduler's --version
    apiserver_version: str
    outcomes: dict[str, replay_mod.Outcome] = field(default_factory=dict)
    scheduled: list[str] = field(default_factory=list)
    seconds: float = 0.0  # first pod created -> every pod settled
    peak_rss_kib: int = 0  # the scheduler process's VmHWM
    apiserver_peak_rss_kib: int = 0  # the kube-apiserver's VmHWM (read before it is stopped)


def _version(binary: Path) -> str:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"cannot run {binary} --version: {exc}", "pass a kube-scheduler built for this machine") from None
    text = (out.stdout or out.stderr).strip()
    return text.split()[-1] if text else ""


def _peak_rss(record: processes.ProcessRecord | None) -> int:
    if record is None or not processes.alive(record):  # a pid reused by another process is not read
        return 0
    try:
        for line in Path(f"/proc/{record.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _file_kubeconfig(state: controlplane.ClusterState, workdir: Path) -> str:
    """The admin kubeconfig naming its certificate files instead of embedding them. The kubernetes Python
    client writes embedded certificate data to temporary files (tmp* in TMPDIR) that it removes only in an
    atexit hook, and a process ended by a signal (the extender re-raises SIGTERM once drained) never runs it;
    with file paths it writes none. The files are the side's own (removed with its directory)."""
    pki = Path(state.ca_file).parent
    path = workdir / "admin-files.kubeconfig"
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "side",
           "clusters": [{"name": "side", "cluster": {"server": state.server, "certificate-authority": state.ca_file}}],
           "users": [{"name": "admin", "user": {"client-certificate": str(pki / "admin.crt"),
                                                "client-key": str(pki / "admin.key")}}],
           "contexts": [{"name": "side", "context": {"cluster": "side", "user": "admin"}}]}
    write_atomic(path, yaml.safe_dump(doc, sort_keys=True), 0o600)
    return str(path)


def _with_extender(config: dict, url: str) -> dict:
    extenders = [dict(e, urlPrefix=url) if e.get("urlPrefix") == EXTENDER_MARK else e for e in config.get("extenders") or []]
    return dict(config, extenders=extenders) if extenders else config


def _start_extender(run: SideRun, kubeconfig: str, started: list) -> str:
    port = processes.free_port()
    argv = [sys.executable, "-m", "scheduler_build.extender", "--host", "127.0.0.1", "--port", str(port),
            "--kubeconfig", kubeconfig]
    started.append(processes.spawn(f"extender-{run.label}", argv, run.workdir / "extender.log"))
    deadline = time.monotonic() + run.timeout
    while time.monotonic() < deadline:
        if not processes.alive(started[-1]):
            log(processes.log_tail(started[-1].log))
            raise UserError(f"side {run.label}: the reference extender exited during startup", "its last log lines are above")
        try:
            # /readyz: its caches have synced, so it knows every node the scheduler will send it
            if processes.http_get(f"http://127.0.0.1:{port}/readyz", None)[0] == 200:
                return f"http://127.0.0.1:{port}"
        except OSError:
            pass
        time.sleep(0.3)
    raise UserError(f"side {run.label}: the reference extender did not answer on 127.0.0.1:{port} "
                    f"after {run.timeout:.0f}s", f"see {started[-1].log}")


def _start_scheduler(run: SideRun, state: controlplane.ClusterState, config: dict, started: list) -> processes.ProcessRecord:
    config = dict(config, clientConnection=dict(config.get("clientConnection") or {},
                                                kubeconfig=state.scheduler_kubeconfig))
    config_path = run.workdir / "config.yaml"
    write_atomic(config_path, yaml.safe_dump(config, sort_keys=True))
    port = processes.free_port()
    argv = [str(run.binary), f"--config={config_path}", f"--secure-port={port}", "--bind-address=127.0.0.1",
            f"--authentication-kubeconfig={state.scheduler_kubeconfig}",
            f"--authorization-kubeconfig={state.scheduler_kubeconfig}", "--v=1"]
    # One statement: the record is in `started` as soon as spawn returns (the clean-up stops it).
    started.append(processes.spawn(f"kube-scheduler-{run.label}", argv, run.workdir / "kube-scheduler.log"))
    record = started[-1]
    processes.wait_http(f"https://127.0.0.1:{port}/healthz", record, run.timeout, ctx=_insecure(),
                        what=f"side {run.label}'s kube-scheduler")
    return record


def _insecure() -> Any:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # its self-signed serving cert; /healthz only
    return ctx


def run_side(run: SideRun, shot: snapshot_mod.Snapshot, pending_only: bool) -> SideResult:
    """Start, replay, wait, read back; stop and remove everything whatever happens."""
    started: list[processes.ProcessRecord] = []
    state_dir = run.workdir / "cluster"
    result = SideResult(run.label, _version(run.binary), "")
    try:
        log(f"==> side {run.label}: control plane")
        state = controlplane.up(run.apiserver, state_dir, etcd=run.etcd, timeout=run.timeout)
        result.apiserver_version = state.version
        kubeconfig = _file_kubeconfig(state, run.workdir)
        api = kubeclient.from_kubeconfig(kubeconfig)
        replay_mod.load_cluster(api, shot)
        config = run.config
        if run.reference_extender:
            config = _with_extender(config, _start_extender(run, kubeconfig, started))
        log(f"==> side {run.label}: {result.version} scheduling {len(shot.pods)} pods")
        scheduler = _start_scheduler(run, state, config, started)
        replay = replay_mod.create_pods(api, shot, run.scheduler_name, pending_only)
        replay_mod.wait_settled(api, replay, max(run.timeout, 0.5 * len(shot.pods)),
                                lambda: processes.alive(scheduler))
        result.outcomes, result.scheduled = replay.outcomes, replay.scheduled
        result.seconds = replay.settled_at - replay.created_at
        result.peak_rss_kib = _peak_rss(scheduler)
        result.apiserver_peak_rss_kib = _peak_rss(state.processes.get("kube-apiserver"))
        log(f"<== side {run.label}: {len(replay.scheduled)} pods settled in {result.seconds:.1f}s")
        return result
    finally:
        for record in reversed(started):
            processes.stop(record)
        if controlplane.load_state(state_dir) is not None:
            controlplane.down(state_dir)
        shutil.rmtree(run.workdir, ignore_errors=True)
