"""A reference kube-scheduler extender: protocol types, policies, a watch-fed
cache and a uvicorn server. `python -m scheduler_build.extender --help`."""

from __future__ import annotations

import logging
from typing import Any

from scheduler_build.errors import UserError
from scheduler_build.extender.app import VERBS, Extender, Options
from scheduler_build.extender.cache import ClusterCache
from scheduler_build.extender.kube import kube_client
from scheduler_build.extender.reflector import Reflector, settle_heap, start_reflectors
from scheduler_build.extender.policy import POLICIES, Policy, UnderlayIPPolicy, get_policy
from scheduler_build.extender.server import Server, StopSignals, setup_logging, start_health_server
from scheduler_build.extender.config import ServeConfig, TLSOptions, settings_defaults

__all__ = ["Extender", "Options", "ClusterCache", "Policy", "UnderlayIPPolicy", "POLICIES",
           "Server", "TLSOptions", "ServeConfig", "settings_defaults", "create", "serve"]

log = logging.getLogger("scheduler_build.extender")


def create(cfg: ServeConfig, api_client: Any = None, connect: bool = True,
           freeze_after_list: bool = False) -> tuple[Extender, list[Reflector]]:
    """The extender and its running reflectors. Without an API configuration it
    still serves: /readyz stays 503 and filter answers carry an Error.
    freeze_after_list: the process is the extender alone (serve), so the cache may be
    moved out of the GC's reach after each list (reflector.settle_heap)."""
    policy = get_policy(cfg.policy)
    cache = ClusterCache(policy.pod_usage, assume_ttl=cfg.assume_ttl)
    reflectors: list[Reflector] = []
    if api_client is None and connect:
        api_client = kube_client(cfg.kubeconfig or None)
        if api_client is None:
            log.warning("no kubeconfig and not in a cluster: serving without an API server (never ready)")
    if api_client is not None and connect:
        reflectors = start_reflectors(cache, api_client, after_list=settle_heap if freeze_after_list else None)
    options = Options(url_prefix=cfg.url_prefix, verbs=dict(cfg.verbs), max_body_bytes=cfg.max_body_bytes)
    return Extender(policy, cache, api_client, options), reflectors


def serve(cfg: ServeConfig) -> None:
    """Run the extender in the foreground until SIGINT/SIGTERM, whenever it comes (StopSignals)."""
    with StopSignals() as stop:
        setup_logging(cfg.log_level)
        extender, reflectors = create(cfg, freeze_after_list=True)
        try:
            server = _listening(lambda: Server(extender, cfg.host, cfg.port, cfg.tls, one_write=cfg.one_write),
                                cfg.host, cfg.port, "--port")
            log.info("extender serving on %s (policy %s, prefix %s)", server.url, cfg.policy, cfg.url_prefix)
            if cfg.health_port:
                _listening(lambda: start_health_server(extender, cfg.host, cfg.health_port), cfg.host,
                           cfg.health_port, "--health-port")
                log.info("probes served on http://%s:%d/healthz and /readyz", cfg.host, cfg.health_port)
            server.run(stop)
        finally:
            for reflector in reflectors:
                reflector.stop()
            extender.close()


def _listening(start: Any, host: str, port: int, flag: str) -> Any:
    """A port that is taken (or a host that is not ours) is the user's to fix: one line, whichever console
    script runs (`scheduler-extender` in a container, `scheduler-build extender.serve`)."""
    try:
        return start()
    except OSError as exc:
        raise UserError(f"extender: cannot listen on {host}:{port}: {exc.strerror or exc}",
                        f"pick another {flag} (0 for a free one) or --host") from None
