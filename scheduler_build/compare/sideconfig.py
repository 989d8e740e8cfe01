"""A side's KubeSchedulerConfiguration as compare runs it (pure): one profile, every node evaluated, no
leader election, the reference extender on a placeholder URL the side fills in."""

from __future__ import annotations

import copy
from typing import Any

from scheduler_build.compare.side import EXTENDER_MARK
from scheduler_build.errors import UserError

# Why 100: with fewer, kube-scheduler stops filtering after the first N feasible nodes its parallel workers
# happen to find, so which nodes are scored (and the next cycle's start index) depends on goroutine timing.
ALL_NODES = 100


def side_config(config: dict, *, label: str, profile: str, reference_url: str = "") -> tuple[dict, str]:
    """(configuration, schedulerName): the chosen profile (the first, or `profile`), every node scored."""
    profiles = config.get("profiles") or [{"schedulerName": "default-scheduler"}]
    names = [p.get("schedulerName", "default-scheduler") for p in profiles]
    if profile and profile not in names:
        raise UserError(f"side {label}: no profile named {profile!r}", f"its profiles: {', '.join(names)}")
    chosen = copy.deepcopy(profiles[names.index(profile) if profile else 0])
    if "percentageOfNodesToScore" in chosen:
        chosen["percentageOfNodesToScore"] = ALL_NODES
    out = {k: copy.deepcopy(v) for k, v in config.items() if k not in ("profiles", "extenders", "leaderElection")}
    out.update(profiles=[chosen], percentageOfNodesToScore=ALL_NODES, leaderElection={"leaderElect": False})
    extenders = []
    for entry in config.get("extenders") or []:
        url = str(entry.get("urlPrefix", ""))
        if reference_url and url == reference_url:
            plain = {k: v for k, v in entry.items() if k != "tlsConfig"}
            extenders.append(dict(plain, urlPrefix=EXTENDER_MARK, enableHTTPS=False))
        else:
            raise UserError(f"side {label}: its configuration calls the extender at {url}, which compare cannot start",
                            "compare starts only the spec's reference extender; remove the others from the side")
    if extenders:
        out["extenders"] = extenders
    return out, chosen.get("schedulerName", "default-scheduler")


def uses_extender(config: dict) -> bool:
    return any(e.get("urlPrefix") == EXTENDER_MARK for e in config.get("extenders") or [])


def from_file(loaded: Any, path: str, label: str) -> dict:
    if not isinstance(loaded, dict) or loaded.get("kind") != "KubeSchedulerConfiguration":
        raise UserError(f"--{label}-config {path}: not a KubeSchedulerConfiguration", "pass the binary's --config file")
    return loaded
