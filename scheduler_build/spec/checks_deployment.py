"""`deployment`: how the scheduler's Deployment runs (replicas, resources, placement)."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields
from scheduler_build.spec.formats import DNS1123_SUBDOMAIN
from scheduler_build.spec.model import Deployment


def check_deployment(f: Fields, value: Any) -> Deployment:
    default = Deployment()
    if value is None or f.mapping("deployment", value, (
            "replicas", "resources", "verbosity", "priorityClassName", "nodeSelector")) is None:
        return default
    p = "deployment"
    replicas = f.optional(value, "replicas", f"{p}.replicas", lambda q, v: f.integer(q, v, lo=1),
                          default=default.replicas)
    verbosity = f.optional(value, "verbosity", f"{p}.verbosity", lambda q, v: f.integer(q, v, lo=0, hi=10),
                           default=default.verbosity)
    prio = f.optional(value, "priorityClassName", f"{p}.priorityClassName",
                      lambda q, v: f.string(q, v, DNS1123_SUBDOMAIN, "a PriorityClass name"), default="")
    selector = _node_selector(f, f"{p}.nodeSelector", value.get("nodeSelector"))
    resources = default.resources
    if value.get("resources") is not None:
        resources = check_resources(f, f"{p}.resources", value["resources"])
    return Deployment(replicas=replicas, resources=resources, verbosity=verbosity, priority_class_name=prio,
                      node_selector=selector)


def _node_selector(f: Fields, path: str, value: Any) -> dict:
    """Any label keys; the values must be strings (a label value is never a number)."""
    selector: dict = {}
    if value is None or f.mapping(path, value, tuple(value) if isinstance(value, dict) else ()) is None:
        return selector
    for k, v in value.items():
        if f.string(f"{path}.{k}", v) is not None:
            selector[str(k)] = v
    return selector


def check_resources(f: Fields, p: str, value: Any) -> dict:
    """A core/v1 ResourceRequirements (requests/limits of cpu, memory, ephemeral-storage)."""
    out: dict[str, Any] = {}
    if f.mapping(p, value, ("requests", "limits")) is None:
        return out
    for kind in ("requests", "limits"):
        if value.get(kind) is None:
            continue
        if f.mapping(f"{p}.{kind}", value[kind], ("cpu", "memory", "ephemeral-storage")) is None:
            continue
        got = {}
        for res, qty in value[kind].items():
            text = f.quantity(f"{p}.{kind}.{res}", qty)
            if text is not None:
                got[res] = text
        out[kind] = got
    return out
