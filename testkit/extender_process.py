"""The reference Python extender (scheduler_build.extender) as a local process for the e2e runs."""

from __future__ import annotations

import os
import signal
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from scheduler_build.cluster import processes
from scheduler_build.errors import UserError
from testkit.kubeobjects import wait_until


@dataclass
class RunningExtender:
    port: int
    record: processes.ProcessRecord
    argv: list[str]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=3) as resp:
                return resp.status, resp.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")
        except OSError as exc:
            return 0, str(exc)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """/readyz answers 200 once its list/watch cache has synced."""
        wait_until(lambda: self.get("/readyz")[0] == 200 or (not processes.alive(self.record) and _died(self)),
                   timeout, what=f"extender {self.url}/readyz")

    def kill(self) -> None:
        processes.stop(self.record, grace=0.0, sig=signal.SIGKILL)

    def stop(self) -> None:
        processes.stop(self.record)

    def restart(self, timeout: float = 120.0) -> None:
        """Start the same command again on the same port (what the scheduler is configured with)."""
        self.stop()
        self.record = processes.spawn(self.record.name, self.argv, self.log_path)
        self.wait_ready(timeout)

    def metric(self, name: str, **labels: str) -> float:
        """Sum of a Prometheus metric's samples matching the labels."""
        code, text = self.get("/metrics")
        total = 0.0
        for line in text.splitlines():
            if not line.startswith(name) or line.startswith("#"):
                continue
            head, _, value = line.rpartition(" ")
            if all(f'{k}="{v}"' in head for k, v in labels.items()):
                total += float(value)
        return total


def _died(ext: RunningExtender) -> bool:
    raise UserError(f"the extender exited (log {ext.log_path}):\n{processes.log_tail(ext.log_path, 25)}", "read its log above")


def start_extender(workdir: Path, kubeconfig: str, name: str = "extender", *, port: int = 0,
                   extra_args: Iterable[str] = (), wait: bool = True, timeout: float = 120.0,
                   env: dict[str, str] | None = None) -> RunningExtender:
    """The reference Python extender (scheduler_build.extender) as a local process on 127.0.0.1
    (`env`: variables added to this process's environment for it)."""
    port = port or processes.free_port()
    argv = [sys.executable, "-m", "scheduler_build.extender", "--host", "127.0.0.1", "--port", str(port),
            "--kubeconfig", str(kubeconfig), *extra_args]
    log_path = Path(workdir) / f"{name}.log"
    record = processes.spawn(name, argv, log_path, env={**os.environ, **env} if env else None)
    ext = RunningExtender(port=port, record=record, argv=argv, log_path=log_path)
    if wait:
        ext.wait_ready(timeout)
    return ext
