"""Helpers shared by the extender tests in tests/unit/extender/ and tests/e2e/ (not collected by pytest)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from testkit import samples
from scheduler_build.extender.app import Extender
from scheduler_build.extender.cache import ClusterCache
from scheduler_build.extender.policy import UnderlayIPPolicy


def synced_extender(nodes: list[dict], pods: list[dict], api_client: Any = None, **options: Any) -> Extender:
    """An Extender whose cache was filled directly (what the reflectors would do)."""
    from scheduler_build.extender.app import Options

    policy = UnderlayIPPolicy()
    cache = ClusterCache(policy.pod_usage)
    cache.replace("nodes", nodes, "10")
    cache.replace("pods", pods, "10")
    cache.mark_synced("nodes")
    cache.mark_synced("pods")
    return Extender(policy, cache, api_client, Options(**options))


def small_cluster() -> tuple[list[dict], list[dict]]:
    """n-full: 2/2 used; n-free: 1/4 used; n-default: no label (10), empty; n-bad: invalid label."""
    nodes = [samples.node("n-full", capacity=2, images=2), samples.node("n-free", capacity=4, images=2),
             samples.node("n-default", images=2), samples.node("n-bad", capacity="ten", images=2)]
    pods = [
        samples.pod("a-1", node_name="n-full", phase="Running"),
        samples.pod("a-2", node_name="n-full", phase="Running"),
        samples.pod("b-1", node_name="n-free", phase="Running"),
        samples.pod("b-done", node_name="n-free", phase="Succeeded"),  # terminated: not counted
        samples.pod("b-failed", node_name="n-free", phase="Failed"),  # terminated: not counted
        samples.pod("b-plain", node_name="n-free", phase="Running", opt_in=False),  # no opt-in: not counted
        samples.pod("c-pending", opt_in=True),  # not bound: not counted
    ]
    return nodes, pods


def call(ext: Extender, path: str, body: Any, method: str = "POST", too_large: bool = False):
    raw = body if isinstance(body, (bytes, bytearray)) else msgspec.json.encode(body)
    resp = asyncio.run(ext.handle(method, path, bytes(raw), too_large=too_large))
    return resp.status, (msgspec.json.decode(resp.body) if resp.content_type == "application/json" else resp.body)
