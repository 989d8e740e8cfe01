"""The inputs of `extender.serve`: the extender's ServeConfig, every value by the one precedence rule."""

from __future__ import annotations

import os
from typing import Any

from scheduler_build.extender.config import ServeConfig, TLSOptions, default_kubeconfig
from scheduler_build.inputs.common import option


def serve_inputs(c: Any, *, host: Any = None, port: Any = None, kubeconfig: str | None = None, policy: str | None = None,
                 url_prefix: str | None = None, filter_verb: str | None = None, prioritize_verb: str | None = None,
                 preempt_verb: str | None = None, bind_verb: str | None = None, max_body_bytes: Any = None,
                 assume_ttl: Any = None, tls_cert: str | None = None, tls_key: str | None = None,
                 tls_client_ca: str | None = None, log_level: str | None = None, no_one_write: Any = False) -> ServeConfig:
    """extender.* by the one precedence rule; no kubeconfig: $KUBECONFIG or ~/.kube/config, else in-cluster."""
    def opt(key: str, flag: Any) -> Any:
        return option(c, f"extender.{key}", flag)

    return ServeConfig(
        host=opt("host", host), port=opt("port", port),
        kubeconfig=opt("kubeconfig", kubeconfig) or default_kubeconfig(os.environ, os.path.expanduser("~")),
        policy=opt("policy", policy), url_prefix=opt("url_prefix", url_prefix),
        verbs={"filter": opt("filter_verb", filter_verb), "prioritize": opt("prioritize_verb", prioritize_verb),
               "preempt": opt("preempt_verb", preempt_verb), "bind": opt("bind_verb", bind_verb)},
        max_body_bytes=opt("max_body_bytes", max_body_bytes), assume_ttl=opt("assume_ttl", assume_ttl),
        tls=TLSOptions(opt("tls_cert", tls_cert), opt("tls_key", tls_key), opt("tls_client_ca", tls_client_ca)),
        log_level=opt("log_level", log_level), one_write=opt("one_write", None) and not no_one_write,
    )
