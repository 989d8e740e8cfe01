"""The parts of `inv dev.run` below the task: what to watch, change detection, the cycle report, the Lease.

The watch loop itself (build, start the scheduler, watch its Lease) lives at the
edge, in flows/dev.py. Change detection polls: a file's (mtime, size) is read on
every poll and its content hashed only when those moved, so saving a file without
changing it, or touching it, starts no rebuild.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.build.info import sha256_file
from scheduler_build.errors import UserError
from scheduler_build.spec.model import Spec

POLL_SECONDS = 0.5
SKIPPED_DIRS = frozenset({".git", ".idea", ".vscode", "vendor", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class Seen:
    """One file as the last poll saw it."""

    mtime_ns: int
    size: int
    sha256: str


Snapshot = dict[str, Seen]


def watch_roots(spec: Spec) -> list[Path]:
    """The spec's local plugin directories and its patch files, in spec order."""
    roots = [p.path for p in spec.plugins if p.local and p.path is not None]
    return [*roots, *spec.patches]


def _editor_leftover(name: str) -> bool:
    return name.startswith((".#", ".")) or name.endswith(("~", ".swp", ".swx", ".tmp"))


def watched_files(roots: list[Path]) -> list[Path]:
    """Every regular file under the roots (a root may be a file), editor leftovers and VCS dirs left out."""
    files: list[Path] = []
    for root in roots:
        if root.is_file():
            files.append(root)
            continue
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root).parts
            if any(part in SKIPPED_DIRS for part in relative[:-1]) or _editor_leftover(path.name):
                continue
            if path.is_file():
                files.append(path)
    return files


def scan(roots: list[Path], previous: Snapshot | None = None) -> Snapshot:
    """The files under roots; content hashed only for files whose mtime or size moved since `previous`."""
    previous = previous or {}
    out: Snapshot = {}
    for path in watched_files(roots):
        try:
            stat = path.stat()
            key = str(path)
            old = previous.get(key)
            if old is not None and (old.mtime_ns, old.size) == (stat.st_mtime_ns, stat.st_size):
                out[key] = old
            else:
                out[key] = Seen(stat.st_mtime_ns, stat.st_size, sha256_file(path))
        except OSError:
            continue  # removed between the walk and the read: the next poll sees it gone
    return out


def changed(old: Snapshot, new: Snapshot) -> list[str]:
    """Files added, removed or whose content differs, sorted."""
    keys = set(old) | set(new)
    return sorted(k for k in keys if (old.get(k) and old[k].sha256) != (new.get(k) and new[k].sha256))


def saved_at(snapshot: Snapshot, files: list[str]) -> float | None:
    """When the newest of the changed files was saved (seconds since the epoch); None if all were removed."""
    times = [snapshot[f].mtime_ns for f in files if f in snapshot]
    return max(times) / 1e9 if times else None


@dataclass
class Cycle:
    """One build-and-restart cycle; `ok` False keeps the previous scheduler running."""

    number: int
    changed: list[str] = field(default_factory=list)
    ok: bool = True
    build_seconds: float = 0.0
    save_to_lease: float | None = None  # from the save to the new scheduler holding its lease
    holder: str = ""
    error: str = ""


def _short(paths: list[str], limit: int = 3) -> str:
    names = [Path(p).name for p in paths[:limit]]
    more = f" +{len(paths) - limit}" if len(paths) > limit else ""
    return ",".join(names) + more


def result_line(cycle: Cycle) -> str:
    """The one stdout line of a cycle: `cycle N ok|failed key=value ...`."""
    parts = [f"cycle {cycle.number}", "ok" if cycle.ok else "failed"]
    if cycle.changed:
        parts.append(f"changed={_short(cycle.changed)}")
    parts.append(f"build={cycle.build_seconds:.1f}s")
    if cycle.ok:
        if cycle.save_to_lease is not None:
            parts.append(f"save_to_lease={cycle.save_to_lease:.1f}s")
        parts.append(f"holder={cycle.holder}")
    else:
        parts.append(f"error={first_line(cycle.error)}")
        parts.append("kept the previous scheduler")
    return " ".join(parts)


def first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else "unknown error"


def lease_target(config: dict) -> tuple[str, str]:
    """(namespace, name) of the Lease a rendered KubeSchedulerConfiguration elects on."""
    election = config.get("leaderElection") or {}
    return election.get("resourceNamespace", "kube-system"), election.get("resourceName", "kube-scheduler")


def host_spec(spec: Spec) -> Spec:
    """The spec as a host-process scheduler runs it: the reference extender in plain HTTP.

    Its client certificate is a Secret mounted into the scheduler pod only; a host process has
    none, and kube-scheduler refuses to start when the tlsConfig files are missing. A
    developer runs the extender beside it with `inv extender.serve` (plain HTTP by default)."""
    ext = spec.reference_extender
    if not (ext.enabled and ext.tls):
        return spec
    return dataclasses.replace(spec, reference_extender=dataclasses.replace(ext, tls=False))


def dev_configuration(config: dict, kubeconfig: str) -> dict:
    """The spec's configuration pointed at a local cluster: its kubeconfig, leader election on."""
    connection = dict(config.get("clientConnection") or {}, kubeconfig=str(kubeconfig))
    election = dict(config.get("leaderElection") or {}, leaderElect=True, resourceLock="leases")
    return dict(config, clientConnection=connection, leaderElection=election)


def lease_holder(api_client, namespace: str, name: str) -> str:
    """holderIdentity of the Lease, "" while it does not exist or nobody holds it."""
    from kubernetes import client as k  # optional: heavy, only when a cluster is talked to
    from kubernetes.client.exceptions import ApiException

    try:
        lease = k.CoordinationV1Api(api_client).read_namespaced_lease(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return ""
        raise UserError(f"cannot read Lease {namespace}/{name}: HTTP {exc.status} {exc.reason}",
                        "check the kubeconfig's rights on coordination.k8s.io leases") from None
    return (lease.spec.holder_identity or "") if lease.spec else ""


def ensure_namespace(api_client, namespace: str) -> None:
    """Create the Lease's namespace if missing; one that exists, or is not ours to create, is left alone."""
    from kubernetes import client as k  # optional: heavy, only when a cluster is talked to
    from kubernetes.client.exceptions import ApiException

    body = k.V1Namespace(metadata=k.V1ObjectMeta(name=namespace))
    try:
        k.CoreV1Api(api_client).create_namespace(body)
    except ApiException as exc:
        if exc.status not in (403, 409):
            raise UserError(f"cannot create namespace {namespace}: HTTP {exc.status} {exc.reason}",
                            "create it, or point leaderElection.resourceNamespace at an existing one") from None
