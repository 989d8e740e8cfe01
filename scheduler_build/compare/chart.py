"""`--chart FILE`: a PNG of each node's requested CPU and memory share, side a beside side b."""

from __future__ import annotations

import io
from pathlib import Path

from scheduler_build.atomic import write_atomic
from scheduler_build.compare import snapshot as snapshot_mod
from scheduler_build.compare.report import RESOURCES
from scheduler_build.errors import UserError


def node_shares(shot: snapshot_mod.Snapshot, pods: list[dict], side: str) -> dict[str, list[float]]:
    """Per resource, each node's requested/allocatable share (nodes in snapshot order)."""
    by_key = {snapshot_mod.pod_key(p): p for p in shot.pods}
    requested: dict[str, dict[str, float]] = {n["metadata"]["name"]: {} for n in shot.nodes}
    for row in pods:
        node = row.get(side)
        if node in requested and row["pod"] in by_key:
            for resource, value in snapshot_mod.requests(by_key[row["pod"]]).items():
                requested[node][resource] = requested[node].get(resource, 0.0) + value
    out = {}
    for resource in RESOURCES:
        out[resource] = [requested[n["metadata"]["name"]].get(resource, 0.0) / have if (
            have := snapshot_mod.allocatable(n).get(resource, 0.0)) else 0.0 for n in shot.nodes]
    return out


def write(path: Path, shot: snapshot_mod.Snapshot, doc: dict) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--chart needs matplotlib", "pip install matplotlib, or drop --chart") from None
    a, b = node_shares(shot, doc["pods"], "a"), node_shares(shot, doc["pods"], "b")
    fig, axes = plt.subplots(len(RESOURCES), 1, figsize=(12, 3.2 * len(RESOURCES)), sharex=True)
    xs = range(len(shot.nodes))
    for ax, resource in zip(axes, RESOURCES):
        ax.bar([x - 0.2 for x in xs], [v * 100 for v in a[resource]], width=0.4, label="a")
        ax.bar([x + 0.2 for x in xs], [v * 100 for v in b[resource]], width=0.4, label="b")
        ax.set_ylabel(f"{resource} requested %")
        ax.legend(loc="upper right")
    axes[-1].set_xlabel("node (snapshot order)")
    s = doc["summary"]
    fig.suptitle(f"{doc['snapshot']}: moved {s['moved']}, newly unschedulable {s['newly_unschedulable']}, "
                 f"newly scheduled {s['newly_scheduled']}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    write_atomic(path, buffer.getvalue())
