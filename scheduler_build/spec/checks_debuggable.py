"""The `debuggable` section: whether the build records each pod's per-plugin results, and how much."""

from __future__ import annotations

import re
from typing import Any

from scheduler_build.spec.model import Debuggable
from scheduler_build.spec.fields import Fields

# A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters.
LABEL_KEY = re.compile(r"^(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
KEYS = ("enabled", "podLabel", "topNodes", "rejectedNodes")


def check_debuggable(f: Fields, raw: Any) -> Debuggable:
    default = Debuggable()
    if raw is None or f.mapping("debuggable", raw, KEYS) is None:
        return default
    return Debuggable(
        enabled=f.optional(raw, "enabled", "debuggable.enabled", f.boolean, default=default.enabled),
        pod_label=f.optional(raw, "podLabel", "debuggable.podLabel", lambda p, v: f.string(
            p, v, LABEL_KEY, "a label key such as example.com/debug-scheduling"), default=default.pod_label),
        top_nodes=f.optional(raw, "topNodes", "debuggable.topNodes", lambda p, v: f.integer(p, v, lo=1, hi=100),
                             default=default.top_nodes),
        rejected_nodes=f.optional(raw, "rejectedNodes", "debuggable.rejectedNodes",
                                  lambda p, v: f.integer(p, v, lo=0, hi=1000), default=default.rejected_nodes),
    )
