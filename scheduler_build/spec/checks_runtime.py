"""How the scheduler process runs: `leaderElection` and `clientConnection`, in the v1 form."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields, seconds
from scheduler_build.spec.formats import DNS1123_SUBDOMAIN

LEADER_ELECTION_KEYS = ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
                        "resourceName", "resourceNamespace")
LEASE_TIMINGS = ("leaseDuration", "renewDeadline", "retryPeriod")
# The scheduler's defaults for LEASE_TIMINGS, in seconds: the order check uses them for unset fields.
DEFAULT_LEASE_SECONDS = (15.0, 10.0, 2.0)


def check_leader_election(f: Fields, value: Any, name: str, namespace: str) -> dict:
    """The lock defaults to a Lease named after the scheduler in its namespace."""
    out: dict[str, Any] = {"leaderElect": True, "resourceLock": "leases", "resourceName": name,
                           "resourceNamespace": namespace}
    if value is None or f.mapping("leaderElection", value, LEADER_ELECTION_KEYS) is None:
        return out
    p = "leaderElection"
    if value.get("leaderElect") is not None and f.boolean(f"{p}.leaderElect", value["leaderElect"]) is not None:
        out["leaderElect"] = value["leaderElect"]
    for key in LEASE_TIMINGS:
        if value.get(key) is not None and f.duration(f"{p}.{key}", value[key], "a duration such as 15s") is not None:
            out[key] = value[key]
    if value.get("resourceLock") is not None:
        if f.enum(f"{p}.resourceLock", value["resourceLock"], ("leases",)) is not None:
            out["resourceLock"] = "leases"
    for key in ("resourceName", "resourceNamespace"):
        if value.get(key) is not None and f.string(f"{p}.{key}", value[key], DNS1123_SUBDOMAIN,
                                                   "a DNS-1123 name") is not None:
            out[key] = value[key]
    if out.get("leaderElect") and out.get("resourceName") == "kube-scheduler" and out.get("resourceNamespace") == "kube-system":
        f.err(f"{p}.resourceName", "'kube-scheduler' in kube-system is the default scheduler's lock; "
              "a second scheduler needs a lock of its own")
    _lease_order(f, p, out)
    return out


def _lease_order(f: Fields, p: str, out: dict) -> None:
    """retryPeriod < renewDeadline < leaseDuration, as the scheduler will run them."""
    lease, renew, retry = (default if got is None else got for got, default in zip(
        (seconds(out.get(k)) for k in LEASE_TIMINGS), DEFAULT_LEASE_SECONDS))
    if renew >= lease:
        f.err(f"{p}.renewDeadline", f"must be shorter than leaseDuration ({lease:g}s), got {renew:g}s")
    if retry >= renew:
        f.err(f"{p}.retryPeriod", f"must be shorter than renewDeadline ({renew:g}s), got {retry:g}s")


def check_client_connection(f: Fields, value: Any) -> dict:
    out: dict[str, Any] = {}
    if value is None or f.mapping("clientConnection", value, (
            "kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")) is None:
        return out
    p = "clientConnection"
    for key in ("kubeconfig", "acceptContentTypes", "contentType"):
        if value.get(key) is not None and f.string(f"{p}.{key}", value[key]) is not None:
            out[key] = value[key]
    if value.get("qps") is not None and f.number(f"{p}.qps", value["qps"], lo=0) is not None:
        out["qps"] = value["qps"]
    if value.get("burst") is not None and f.integer(f"{p}.burst", value["burst"], lo=0) is not None:
        out["burst"] = value["burst"]
    return out
