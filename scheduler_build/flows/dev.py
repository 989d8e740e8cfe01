"""`dev.run`'s conductor: build, run the scheduler against a cluster, rebuild and swap it on every save.

The pure parts (what to watch, change detection, the report) are in devloop.py; this is the
supervisor of the process and the Lease. Its inputs are decided by the task (inputs.dev).
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Callable

import yaml

from scheduler_build import kubeclient
from scheduler_build import spec as spec_mod
from scheduler_build.dev import loop as devloop
from scheduler_build.atomic import write_atomic
from scheduler_build.build import pipeline as build_stage
from scheduler_build.cluster import processes
from scheduler_build.config import schedulerconfig
from scheduler_build.errors import UserError
from scheduler_build.inputs.dev import DevInputs
from scheduler_build.progress import log


LEASE_TIMEOUT = 180.0


class _Session:
    """The running scheduler of one `dev.run`: its process, config, Lease and last holder."""

    def __init__(self, inputs: DevInputs):
        self.spec, self.kubeconfig, self.workdir = inputs.spec, inputs.kubeconfig, inputs.workdir
        self.request = inputs.request
        spec, kubeconfig = self.spec, self.kubeconfig
        self.config = devloop.dev_configuration(schedulerconfig.for_spec(devloop.host_spec(spec)), kubeconfig)
        self.namespace, self.lease = devloop.lease_target(self.config)
        self.client = kubeclient.from_kubeconfig(kubeconfig)
        self.record: processes.ProcessRecord | None = None
        self.holder = ""

    def build(self) -> Path:
        return build_stage.run(self.request).binary

    def start(self, binary: Path, number: int) -> None:
        config_path = self.workdir / "config.yaml"
        write_atomic(config_path, yaml.safe_dump(self.config, sort_keys=True))
        argv = [str(binary), f"--config={config_path}", f"--secure-port={processes.free_port()}",
                "--bind-address=127.0.0.1", f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}", "--v=2", *spec_mod.scheduler_flags(self.spec)]
        self.record = processes.spawn(f"dev-scheduler-{number}", argv, self.workdir / f"scheduler-{number}.log")

    def stop(self) -> None:
        if self.record is not None:
            processes.stop(self.record)
            self.record = None

    def read_holder(self) -> str:
        return devloop.lease_holder(self.client, self.namespace, self.lease)

    def wait_new_holder(self, previous: str) -> str:
        """Poll the Lease until a holder other than `previous` has it; fail if our scheduler exits."""
        deadline = time.monotonic() + LEASE_TIMEOUT
        while time.monotonic() < deadline:
            if self.record is None or not processes.alive(self.record):
                log(processes.log_tail(self.record.log) if self.record else "")
                raise UserError(f"kube-scheduler exited before taking Lease {self.namespace}/{self.lease}"
                                f" (log: {self.record.log if self.record else '-'})", "its last log lines are above")
            holder = self.read_holder()
            if holder and holder != previous:
                return holder
            time.sleep(0.2)
        raise UserError(f"no new holder of Lease {self.namespace}/{self.lease} after {LEASE_TIMEOUT:.0f}s",
                        f"another scheduler may hold it; see {self.record.log}")

    def ensure_namespace(self) -> None:
        devloop.ensure_namespace(self.client, self.namespace)


def _cycle(session: _Session, number: int, files: list[str], saved: float | None) -> devloop.Cycle:
    """Build; on success swap the running scheduler for the new one and wait for it to hold the Lease."""
    cycle = devloop.Cycle(number=number, changed=files)
    started = time.monotonic()
    try:
        binary = session.build()
    except UserError as exc:
        cycle.ok, cycle.error = False, str(exc)
        cycle.build_seconds = time.monotonic() - started
        return cycle
    cycle.build_seconds = time.monotonic() - started
    previous = session.holder
    session.stop()
    session.start(binary, number)
    session.holder = cycle.holder = session.wait_new_holder(previous)
    cycle.save_to_lease = time.time() - saved if saved is not None else None
    return cycle


def report(cycle: devloop.Cycle, emit: Callable[[str], None]) -> None:
    if cycle.ok and cycle.save_to_lease is not None:
        log(f"dev: save -> lease held by the new scheduler in {cycle.save_to_lease:.1f}s "
            f"(build {cycle.build_seconds:.1f}s)")
    elif not cycle.ok:
        print(f"error: {devloop.first_line(cycle.error)}", file=sys.stderr, flush=True)
    emit(devloop.result_line(cycle))


def _watch(session: _Session, roots: list[Path], once: bool, emit: Callable[[str], None]) -> None:
    snapshot = devloop.scan(roots)
    number = 1
    while True:
        time.sleep(devloop.POLL_SECONDS)
        current = devloop.scan(roots, snapshot)
        files = devloop.changed(snapshot, current)
        if not files:
            continue
        time.sleep(devloop.POLL_SECONDS)  # let an editor finish a multi-file save
        current = devloop.scan(roots, current)
        files = devloop.changed(snapshot, current)
        snapshot = current
        log(f"dev: {len(files)} file(s) changed, rebuilding")
        report(_cycle(session, number, files, devloop.saved_at(current, files)), emit)
        number += 1
        if once:
            return


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM takes Ctrl-C's path: the scheduler is stopped on the way out


def run(inputs: DevInputs, emit: Callable[[str], None]) -> None:
    """Build, run, and on every save rebuild and swap; a failed build keeps the previous scheduler running."""
    session = _Session(inputs)
    session.workdir.mkdir(parents=True, exist_ok=True)
    session.ensure_namespace()
    roots = devloop.watch_roots(inputs.spec)
    signal.signal(signal.SIGTERM, _interrupt)
    session.holder = session.read_holder()  # a new holder is ours: wait past a stale one
    try:
        first = _cycle(session, 0, [], None)
        if not first.ok:
            raise UserError(f"first build failed: {devloop.first_line(first.error)}", "fix it and run dev.run again")
        report(first, emit)
        log(f"dev: watching {len(devloop.watched_files(roots))} file(s) under {len(roots)} path(s); Ctrl-C stops")
        _watch(session, roots, inputs.once, emit)
    except KeyboardInterrupt:
        log("dev: stopping the scheduler")
    finally:
        session.stop()
