"""Kubernetes' version skew policy between kube-scheduler and kube-apiserver, as `deploy` enforces it.

Upstream's policy (https://kubernetes.io/releases/version-skew-policy/): kube-scheduler must not be
newer than kube-apiserver, and may be at most one minor older. A newer scheduler watches API objects
the server does not serve yet; an older one than that talks to APIs the server removed.
Pure functions: `deploy`, `doctor --kubeconfig` and `cluster.status` all judge through `verdict`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

POLICY = "kube-scheduler may be at most one minor older than kube-apiserver, never newer"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")
_TAG = re.compile(r"^(v\d+\.\d+\.\d+)(?:-|$)")


@dataclass(frozen=True)
class Verdict:
    scheduler: str  # as given, e.g. v1.37.2
    server: str  # the API server's gitVersion, e.g. v1.36.3
    ok: bool
    reason: str  # "" when ok: one line naming both versions and the policy
    allowed: tuple[str, ...]  # the scheduler minors this server accepts, newest first

    def as_dict(self) -> dict:
        return {"scheduler": self.scheduler, "apiserver": self.server, "ok": self.ok, "reason": self.reason,
                "allowed_scheduler_minors": list(self.allowed)}


def minor(version: str) -> tuple[int, int]:
    """(major, minor) of v1.36.3, 1.36, v1.36.3+k3s1 or v1.36.3-eks-1; ValueError for anything else."""
    match = _VERSION.match((version or "").strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {version!r}")
    return int(match[1]), int(match[2])


def tag_version(tag: str) -> str:
    """The Kubernetes release an image tag starts with (v1.36.3 of v1.36.3-0.1.0, the default tag), or ""."""
    match = _TAG.match(tag or "")
    return match[1] if match else ""


def allowed_minors(server: str) -> tuple[str, ...]:
    """The scheduler minors the policy accepts next to `server`: its own and the one before, newest first."""
    major, server_minor = minor(server)
    return tuple(f"{major}.{m}" for m in (server_minor, server_minor - 1) if m >= 0)


def verdict(scheduler: str, server: str) -> Verdict:
    """Judge a scheduler version against an API server version under the policy."""
    sched, serv = minor(scheduler), minor(server)
    allowed = allowed_minors(server)
    shown = f"the scheduler is Kubernetes {scheduler} and the API server is {server}"
    if sched[0] != serv[0]:
        why = "a different major version"
    elif sched[1] > serv[1]:
        why = f"the scheduler is {_minors(sched[1] - serv[1])} newer"
    elif serv[1] - sched[1] > 1:
        why = f"the scheduler is {_minors(serv[1] - sched[1])} older"
    else:
        return Verdict(scheduler, server, True, "", allowed)
    return Verdict(scheduler, server, False, f"version skew refused: {shown} ({why}); {POLICY}", allowed)


def _minors(count: int) -> str:
    return f"{count} minor" + ("s" if count != 1 else "")


def hint(found: Verdict) -> str:
    """The fixes for a refused pair, naming the scheduler minors this server accepts."""
    major, sched = minor(found.scheduler)
    return (f"build the scheduler for {' or '.join(found.allowed)} (kubernetes.version in the spec), deploy it to an "
            f"API server of {major}.{sched} or {major}.{sched + 1}, or pass --allow-version-skew to deploy anyway")
