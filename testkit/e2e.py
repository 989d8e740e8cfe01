"""Run our kube-scheduler against a real control plane: its configuration, process or container, image.

Used by the e2e tests and by `inv bench.e2e`: a v1 KubeSchedulerConfiguration
for a second scheduler (built by the product's scheduler_build.config.schedulerconfig),
the scheduler as a local process or as its image in a container (host networking
to the API server on 127.0.0.1). Objects and waits: testkit.kube; the
reference extender as a process: testkit.extender_process.
"""

from __future__ import annotations

import signal
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from scheduler_build import platforms, settings
from scheduler_build.image import assemble
from scheduler_build.image.gomodules import SbomInputs
from scheduler_build.image.request import ImageRequest, PlatformInput
from scheduler_build.publish import daemon
from scheduler_build.publish.publisher import ImageArtifact
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import processes
from scheduler_build.config import schedulerconfig
from scheduler_build.errors import UserError
from testkit import docker_sdk


# --------------------------------------------------------------------------- configuration


def scheduler_config(
    scheduler_name: str,
    kubeconfig: str,
    *,
    leader_elect: bool = False,
    lease_name: str = "kube-scheduler",
    lease_namespace: str = "kube-system",
    extenders: Iterable[dict] = (),
    plugins: dict | None = None,
    plugin_config: Iterable[dict] = (),
    percentage_of_nodes_to_score: int | None = None,
    qps: float = 200,
    burst: int = 400,
) -> dict:
    """A minimal KubeSchedulerConfiguration with one profile, through the product's builder.

    The default lease name: the API server's bootstrap role `system:kube-scheduler` lets its
    user get/update only Leases named `kube-scheduler` (in any namespace), so a second
    scheduler with that identity keeps the name and moves the namespace. Extender entries:
    `schedulerconfig.extender_entry`.
    """
    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    if plugins:
        profile["plugins"] = plugins
    if plugin_config:
        profile["pluginConfig"] = list(plugin_config)
    leader_election = {
        "leaderElect": leader_elect,
        "resourceLock": "leases",
        "resourceName": lease_name,
        "resourceNamespace": lease_namespace,
        # Short periods so a takeover after a kill happens within a test.
        "leaseDuration": "8s",
        "renewDeadline": "6s",
        "retryPeriod": "1s",
    }
    return schedulerconfig.scheduler_configuration(
        profiles=[profile], leader_election=leader_election,
        client_connection={"kubeconfig": kubeconfig, "qps": qps, "burst": burst},
        percentage_of_nodes_to_score=percentage_of_nodes_to_score, extenders=extenders,
    )


# A pod that only an extender rejected waits in the scheduler's unschedulable pool for the next
# cluster event, or for this long (default 5m). An extender's own watch can lag the scheduler's:
# the scheduler may retry on a pod deletion before the extender has seen it, and then nothing
# else happens. The flag (deprecated, still honoured in 1.36) bounds that wait.
EXTENDER_RETRY_ARGS = ("--pod-max-in-unschedulable-pods-duration=15s",)


# --------------------------------------------------------------------------- the scheduler


@dataclass
class RunningScheduler:
    name: str
    port: int
    config_path: Path
    log_path: Path
    record: processes.ProcessRecord | None = None  # a local process
    container: Any = None  # a docker container (host network)
    _log_thread: threading.Thread | None = field(default=None, repr=False)

    def alive(self) -> bool:
        if self.record is not None:
            return processes.alive(self.record)
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - a removed container is not alive
            return False
        return self.container.status == "running"

    def healthz(self) -> bool:
        ctx = ssl.create_default_context()
        # The scheduler serves a self-signed certificate it generated at startup.
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}/healthz", context=ctx, timeout=3) as resp:
                return resp.status == 200
        except OSError:
            return False

    def wait_healthy(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise UserError(f"kube-scheduler {self.name} exited at startup; log {self.log_path}:\n{processes.log_tail(self.log_path, 25)}",
                                "read the scheduler's own error above")
            if self.healthz():
                return
            time.sleep(0.5)
        raise UserError(f"kube-scheduler {self.name} not healthy after {timeout:.0f}s; log {self.log_path}:\n{processes.log_tail(self.log_path, 25)}",
                        "the machine may be overloaded")

    def kill(self) -> None:
        """SIGKILL: no graceful lease release, as a crash would."""
        if self.record is not None:
            processes.stop(self.record, grace=0.0, sig=signal.SIGKILL)
        elif self.container is not None:
            try:
                self.container.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass

    def stop(self) -> None:
        if self.record is not None:
            processes.stop(self.record)
        elif self.container is not None:
            try:
                self.container.stop(timeout=10)
            except Exception:  # noqa: BLE001 - already gone
                pass
            try:
                self.container.remove(force=True)
            except Exception:  # noqa: BLE001 - already removed
                pass
        if self._log_thread is not None:
            self._log_thread.join(timeout=10)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def _scheduler_args(config_path: str, kubeconfig: str, port: int, verbosity: int) -> list[str]:
    return [
        f"--config={config_path}",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        # Delegated authn/authz of the scheduler's own endpoints, with its own identity.
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--v={verbosity}",
    ]


def start_scheduler(binary: Path, config: dict, workdir: Path, name: str, *, verbosity: int = 2,
                    wait: bool = True, timeout: float = 120.0, extra_args: Iterable[str] = ()) -> RunningScheduler:
    """Start kube-scheduler as a local process with `config` written under workdir."""
    workdir = Path(workdir)
    config_path = workdir / f"{name}.config.yaml"
    write_atomic(config_path, yaml.safe_dump(config, sort_keys=True))
    port = processes.free_port()
    log_path = workdir / f"{name}.log"
    argv = [str(binary), *_scheduler_args(str(config_path), config["clientConnection"]["kubeconfig"], port, verbosity),
            *extra_args]
    record = processes.spawn(f"kube-scheduler-{name}", argv, log_path)
    run = RunningScheduler(name=name, port=port, config_path=config_path, log_path=log_path, record=record)
    if wait:
        run.wait_healthy(timeout)
    return run


def start_scheduler_container(image: str, config: dict, workdir: Path, name: str, *, verbosity: int = 2,
                              wait: bool = True, timeout: float = 120.0) -> RunningScheduler:
    """Start the scheduler's image in a container on the host network (the API server is on 127.0.0.1).

    The configuration and kubeconfig are mounted read-only at /etc/scheduler-build/; the
    image's own entrypoint (the binary) and user are used as shipped.
    """

    workdir = Path(workdir)
    kubeconfig = Path(config["clientConnection"]["kubeconfig"])
    inside = dict(config, clientConnection=dict(config["clientConnection"], kubeconfig="/etc/scheduler-build/kubeconfig"))
    config_path = workdir / f"{name}.config.yaml"
    write_atomic(config_path, yaml.safe_dump(inside, sort_keys=True))
    # The container runs as a non-root user: its mounted files must be readable to it.
    mounted_kc = workdir / f"{name}.kubeconfig"
    write_atomic(mounted_kc, kubeconfig.read_bytes(), 0o644)
    config_path.chmod(0o644)
    port = processes.free_port()
    client = docker_sdk.client()
    container = client.containers.run(
        image,
        command=_scheduler_args("/etc/scheduler-build/config.yaml", "/etc/scheduler-build/kubeconfig", port, verbosity),
        name=f"scheduler-build-e2e-{name}",
        network_mode="host",
        detach=True,
        read_only=True,
        volumes={
            str(config_path): {"bind": "/etc/scheduler-build/config.yaml", "mode": "ro"},
            str(mounted_kc): {"bind": "/etc/scheduler-build/kubeconfig", "mode": "ro"},
        },
        tmpfs={"/tmp": ""},
        labels={"scheduler-build.e2e": name},
    )
    log_path = workdir / f"{name}.log"

    def copy_logs() -> None:
        with open(log_path, "ab") as out:
            try:
                for chunk in container.logs(stream=True, follow=True):
                    out.write(chunk)
                    out.flush()
            except Exception:  # noqa: BLE001 - the container went away
                pass

    thread = threading.Thread(target=copy_logs, daemon=True)
    thread.start()
    run = RunningScheduler(name=name, port=port, config_path=config_path, log_path=log_path, container=container,
                           _log_thread=thread)
    if wait:
        try:
            run.wait_healthy(timeout)
        except BaseException:
            run.stop()
            raise
    return run


# --------------------------------------------------------------------------- the image


def scheduler_image(build_result: Any, dist_dir: Path, repository: str = "scheduler-build-e2e/kube-scheduler") -> str:
    """Package a build as its scratch image (issue-5 path, loaded into the engine); return the local tag."""
    arch = platforms.host_arch()
    info = build_result.info
    request = ImageRequest(
        name=info.name,
        k8s_version=info.kubernetes.version,
        spec_version="0.0.0-e2e",
        repository=repository,
        inputs=[PlatformInput(platform=f"linux/{arch}", arch=arch, binary=Path(build_result.binary), build_info=info)],
        source_date_epoch=info.source_date_epoch,
        dist_dir=Path(dist_dir), source="", revision="", dirty=False, licenses=settings.default("image.licenses"),
        force=False, base_tag="", spec_sha256="", spec_dir=None, sbom_inputs=SbomInputs(),
    )
    result = assemble.build(request, arch)
    daemon.hold(ImageArtifact(result.layout, result.info))
    return next(p.local_tag for p in result.platforms if p.arch == arch)


# --------------------------------------------------------------------------- `inv e2e`


def pytest_argv(python: str, k: str | None = None, verbose: bool = False, exitfirst: bool = False,
                junit: str | None = None, paths: Iterable[str] = ("tests",)) -> list[str]:
    """The pytest command of `inv e2e`: every test marked e2e (tests/e2e/ and tests/node/, marked by their directory)."""
    argv = [python, "-m", "pytest", "-m", "e2e", *paths]
    if k:
        argv += ["-k", k]
    if verbose:
        argv.append("-v")
    if exitfirst:
        argv.append("-x")
    if junit:
        argv.append(f"--junitxml={junit}")
    return argv
