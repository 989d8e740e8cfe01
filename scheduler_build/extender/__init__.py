"""A reference kube-scheduler extender: protocol types, policies, a watch-fed
cache and a uvicorn server. `python -m scheduler_build.extender --help`."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from scheduler_build.extender.app import Extender, Options
from scheduler_build.extender.cache import ClusterCache, Reflector, kube_client, start_reflectors
from scheduler_build.extender.policy import POLICIES, Policy, UnderlayIPPolicy, get_policy
from scheduler_build.extender.server import Server, TLSOptions

__all__ = ["Extender", "Options", "ClusterCache", "Policy", "UnderlayIPPolicy", "POLICIES",
           "Server", "TLSOptions", "ServeConfig", "create", "serve"]

log = logging.getLogger("scheduler_build.extender")


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8888
    kubeconfig: str = ""
    policy: str = "underlay-ip"
    url_prefix: str = "/"
    verbs: dict[str, str] = field(default_factory=lambda: {v: v for v in ("filter", "prioritize", "preempt", "bind")})
    max_body_bytes: int = 64 * 1024 * 1024
    assume_ttl: float = 30.0
    tls: TLSOptions = field(default_factory=TLSOptions)
    log_level: str = "info"


def create(cfg: ServeConfig, api_client: Any = None, connect: bool = True) -> tuple[Extender, list[Reflector]]:
    """The extender and its running reflectors. Without an API configuration it
    still serves: /readyz stays 503 and filter answers carry an Error."""
    policy = get_policy(cfg.policy)
    cache = ClusterCache(policy.pod_usage, assume_ttl=cfg.assume_ttl)
    reflectors: list[Reflector] = []
    if api_client is None and connect:
        api_client = kube_client(cfg.kubeconfig or None)
        if api_client is None:
            log.warning("no kubeconfig and not in a cluster: serving without an API server (never ready)")
    if api_client is not None and connect:
        reflectors = start_reflectors(cache, api_client)
    options = Options(url_prefix=cfg.url_prefix, verbs=dict(cfg.verbs), max_body_bytes=cfg.max_body_bytes)
    return Extender(policy, cache, api_client, options), reflectors


def serve(cfg: ServeConfig) -> None:
    """Run the extender in the foreground until SIGINT/SIGTERM."""
    from scheduler_build.extender.server import setup_logging

    setup_logging(cfg.log_level)
    extender, reflectors = create(cfg)
    server = Server(extender, cfg.host, cfg.port, cfg.tls)
    log.info("extender serving on %s (policy %s, prefix %s)", server.url, cfg.policy, cfg.url_prefix)
    try:
        server.run()
    finally:
        for reflector in reflectors:
            reflector.stop()
        extender.close()
