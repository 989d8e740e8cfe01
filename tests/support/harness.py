"""Run our kube-scheduler (and friends) against a real control plane, and drive it.

Used by the e2e tests and by `inv bench.e2e`: a minimal v1 KubeSchedulerConfiguration
for a second scheduler, the scheduler as a local process or as its image in a
container (host networking to the API server on 127.0.0.1), and the Kubernetes
objects the runs create through the kubernetes Python client (Nodes are plain API
objects: no kubelet runs, pods are bound and nothing starts).
"""

from __future__ import annotations

import concurrent.futures
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from tests.support import docker_sdk
from scheduler_build import platforms
from scheduler_build.cluster import controlplane as cluster
from scheduler_build.errors import UserError
from scheduler_build.atomic import write_atomic

CONFIG_API = "kubescheduler.config.k8s.io/v1"


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
    """A minimal KubeSchedulerConfiguration with one profile (until `inv config.render` is used).

    The default lease name: the API server's bootstrap role `system:kube-scheduler` lets its
    user get/update only Leases named `kube-scheduler` (in any namespace), so a second
    scheduler with that identity keeps the name and moves the namespace.
    """
    profile: dict[str, Any] = {"schedulerName": scheduler_name}
    if plugins:
        profile["plugins"] = plugins
    if plugin_config:
        profile["pluginConfig"] = list(plugin_config)
    config: dict[str, Any] = {
        "apiVersion": CONFIG_API,
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": kubeconfig, "qps": qps, "burst": burst},
        "leaderElection": {
            "leaderElect": leader_elect,
            "resourceLock": "leases",
            "resourceName": lease_name,
            "resourceNamespace": lease_namespace,
            # Short periods so a takeover after a kill happens within a test.
            "leaseDuration": "8s",
            "renewDeadline": "6s",
            "retryPeriod": "1s",
        },
        "profiles": [profile],
    }
    if percentage_of_nodes_to_score is not None:
        config["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    extenders = list(extenders)
    if extenders:
        config["extenders"] = extenders
    return config


# A pod that only an extender rejected waits in the scheduler's unschedulable pool for the next
# cluster event, or for this long (default 5m). An extender's own watch can lag the scheduler's:
# the scheduler may retry on a pod deletion before the extender has seen it, and then nothing
# else happens. The flag (deprecated, still honoured in 1.36) bounds that wait.
EXTENDER_RETRY_ARGS = ("--pod-max-in-unschedulable-pods-duration=15s",)


def extender_entry(url: str, *, node_cache_capable: bool, ignorable: bool = False, bind: bool = False,
                   weight: int = 1, http_timeout: str = "5s", filter_verb: str = "filter",
                   prioritize_verb: str = "prioritize") -> dict:
    """One `extenders` entry of a v1 configuration."""
    entry: dict[str, Any] = {
        "urlPrefix": url,
        "filterVerb": filter_verb,
        "prioritizeVerb": prioritize_verb,
        "weight": weight,
        "nodeCacheCapable": node_cache_capable,
        "ignorable": ignorable,
        "httpTimeout": http_timeout,
        "enableHTTPS": False,
    }
    if bind:
        entry["bindVerb"] = "bind"
    return entry


# --------------------------------------------------------------------------- the scheduler


@dataclass
class RunningScheduler:
    name: str
    port: int
    config_path: Path
    log_path: Path
    record: cluster.ProcessRecord | None = None  # a local process
    container: Any = None  # a docker container (host network)
    _log_thread: threading.Thread | None = field(default=None, repr=False)

    def alive(self) -> bool:
        if self.record is not None:
            return cluster.alive(self.record)
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
                raise UserError(f"kube-scheduler {self.name} exited at startup; log {self.log_path}:\n{cluster.log_tail(self.log_path, 25)}",
                                "read the scheduler's own error above")
            if self.healthz():
                return
            time.sleep(0.5)
        raise UserError(f"kube-scheduler {self.name} not healthy after {timeout:.0f}s; log {self.log_path}:\n{cluster.log_tail(self.log_path, 25)}",
                        "the machine may be overloaded")

    def kill(self) -> None:
        """SIGKILL: no graceful lease release, as a crash would."""
        import signal

        if self.record is not None:
            cluster.stop(self.record, grace=0.0, sig=signal.SIGKILL)
        elif self.container is not None:
            try:
                self.container.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass

    def stop(self) -> None:
        if self.record is not None:
            cluster.stop(self.record)
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
    port = cluster.free_port()
    log_path = workdir / f"{name}.log"
    argv = [str(binary), *_scheduler_args(str(config_path), config["clientConnection"]["kubeconfig"], port, verbosity),
            *extra_args]
    record = cluster.spawn(f"kube-scheduler-{name}", argv, log_path)
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
    port = cluster.free_port()
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


# --------------------------------------------------------------------------- objects


def api_client(kubeconfig: str) -> Any:
    from kubernetes import config as kconfig

    client = kconfig.new_client_from_config(config_file=str(kubeconfig))
    # Many threads share one client in the bulk helpers below.
    client.rest_client.pool_manager.connection_pool_kw["maxsize"] = 32
    return client


def node_body(name: str, *, cpu: str = "32", memory: str = "128Gi", pods: int = 110,
              labels: dict[str, str] | None = None) -> dict:
    """A Node as a kubelet would register it: capacity, allocatable, Ready."""
    resources = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "no kubelet: an API object for scheduling tests"}],
        },
    }


def pod_body(name: str, scheduler_name: str, *, labels: dict[str, str] | None = None, cpu: str = "10m",
             memory: str = "16Mi") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "schedulerName": scheduler_name,
            "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "c",
                "image": "scheduler-build.local/never-pulled:0",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }],
        },
    }


def parallel(fn: Callable[[Any], Any], items: Iterable[Any], workers: int = 8) -> list[Any]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def create_nodes(api: Any, bodies: list[dict], workers: int = 8) -> list[str]:
    from kubernetes import client as k

    core = k.CoreV1Api(api)

    def one(body: dict) -> str:
        created = core.create_node(body)
        # Nodes keep their status on create in current versions; write it through the
        # status subresource when a version drops it, so capacity is always there.
        if not (created.status and created.status.allocatable):
            core.patch_node_status(body["metadata"]["name"], {"status": body["status"]})
        return body["metadata"]["name"]

    return parallel(one, bodies, workers)


def delete_nodes(api: Any, names: Iterable[str], workers: int = 8) -> None:
    from kubernetes import client as k
    from kubernetes.client.exceptions import ApiException

    core = k.CoreV1Api(api)

    def one(name: str) -> None:
        try:
            core.delete_node(name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    parallel(one, list(names), workers)


def ensure_namespace(api: Any, name: str) -> None:
    from kubernetes import client as k
    from kubernetes.client.exceptions import ApiException

    try:
        k.CoreV1Api(api).create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except ApiException as exc:
        if exc.status != 409:
            raise


def create_pods(api: Any, namespace: str, bodies: list[dict], workers: int = 8) -> list[str]:
    from kubernetes import client as k

    core = k.CoreV1Api(api)
    return parallel(lambda body: core.create_namespaced_pod(namespace, body).metadata.name, bodies, workers)


def force_delete_pods(api: Any, namespace: str, names: Iterable[str] | None = None, workers: int = 8) -> None:
    """Delete pods at once (grace 0): with no kubelet, a graceful delete of a bound pod never ends."""
    from kubernetes import client as k
    from kubernetes.client.exceptions import ApiException

    core = k.CoreV1Api(api)
    if names is None:
        names = [p.metadata.name for p in core.list_namespaced_pod(namespace).items]

    def one(name: str) -> None:
        try:
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:
                raise

    parallel(one, list(names), workers)


def pods_by_name(api: Any, namespace: str) -> dict[str, Any]:
    from kubernetes import client as k

    return {p.metadata.name: p for p in k.CoreV1Api(api).list_namespaced_pod(namespace).items}


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.5, what: str = "condition") -> Any:
    """Poll until predicate() is truthy; return its value. Generous timeouts: the machine is shared."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached after {timeout:.0f}s (last: {last!r})")


def wait_bound(api: Any, namespace: str, count: int, timeout: float) -> dict[str, str]:
    """Wait until `count` pods of the namespace have a node; return pod -> node."""
    def bound() -> dict[str, str] | None:
        placed = {n: p.spec.node_name for n, p in pods_by_name(api, namespace).items() if p.spec.node_name}
        return placed if len(placed) >= count else None

    return wait_until(bound, timeout, interval=1.0, what=f"{count} pods bound in {namespace}")


def events_for(api: Any, namespace: str, reason: str | None = None) -> list[Any]:
    from kubernetes import client as k

    items = k.CoreV1Api(api).list_namespaced_event(namespace).items
    return [e for e in items if reason is None or e.reason == reason]


# --------------------------------------------------------------------------- the image


def scheduler_image(build_result: Any, dist_dir: Path, repository: str = "scheduler-build-e2e/kube-scheduler") -> str:
    """Package a build as its scratch image (issue-5 path, loaded into the engine); return the local tag."""
    from scheduler_build.build.info import BuildInfo
    from scheduler_build.image import assemble
    from scheduler_build.image.request import ImageRequest, PlatformInput
    from scheduler_build.publish import daemon

    arch = platforms.host_arch()
    info = BuildInfo.from_dict(build_result.info)
    request = ImageRequest(
        name=info.name,
        k8s_version=info.kubernetes.version,
        spec_version="0.0.0-e2e",
        repository=repository,
        inputs=[PlatformInput(platform=f"linux/{arch}", arch=arch, binary=Path(build_result.binary), build_info=info)],
        source_date_epoch=info.source_date_epoch,
        dist_dir=Path(dist_dir),
    )
    result = assemble.build(request, arch)
    daemon.publish(result)
    return next(p.local_tag for p in result.platforms if p.arch == arch)


# --------------------------------------------------------------------------- the extender


@dataclass
class RunningExtender:
    port: int
    record: cluster.ProcessRecord
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
        wait_until(lambda: self.get("/readyz")[0] == 200 or (not cluster.alive(self.record) and _died(self)),
                   timeout, what=f"extender {self.url}/readyz")

    def kill(self) -> None:
        import signal

        cluster.stop(self.record, grace=0.0, sig=signal.SIGKILL)

    def stop(self) -> None:
        cluster.stop(self.record)

    def restart(self, timeout: float = 120.0) -> None:
        """Start the same command again on the same port (what the scheduler is configured with)."""
        self.stop()
        self.record = cluster.spawn(self.record.name, self.argv, self.log_path)
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
    raise UserError(f"the extender exited (log {ext.log_path}):\n{cluster.log_tail(ext.log_path, 25)}", "read its log above")


def start_extender(workdir: Path, kubeconfig: str, name: str = "extender", *, port: int = 0,
                   extra_args: Iterable[str] = (), wait: bool = True, timeout: float = 120.0) -> RunningExtender:
    """The reference Python extender (scheduler_build.extender) as a local process on 127.0.0.1."""
    import sys

    port = port or cluster.free_port()
    argv = [sys.executable, "-m", "scheduler_build.extender", "--host", "127.0.0.1", "--port", str(port),
            "--kubeconfig", str(kubeconfig), *extra_args]
    log_path = Path(workdir) / f"{name}.log"
    record = cluster.spawn(name, argv, log_path)
    ext = RunningExtender(port=port, record=record, argv=argv, log_path=log_path)
    if wait:
        ext.wait_ready(timeout)
    return ext


# --------------------------------------------------------------------------- `inv e2e`


def pytest_argv(python: str, k: str | None = None, verbose: bool = False, exitfirst: bool = False,
                junit: str | None = None, paths: Iterable[str] = ("tests",)) -> list[str]:
    """The pytest command of `inv e2e`: every test marked e2e (they live in tests/e2e/)."""
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
