"""The reference extender's configuration, a leaf: its defaults, verbs, log levels, port and image tag.

Core (settings, options, the spec's defaults, the task layer's help texts) reads these
without importing the extender's app or server, so `inv` never loads prometheus_client,
msgspec or uvicorn; the extender package builds on the same dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_build import __version__

PORT = 8888  # the extender's listen port: ServeConfig, the spec's referenceExtender.port, the manifests
VERBS = ("filter", "prioritize", "preempt", "bind")
LOG_LEVELS = ("debug", "info", "warning", "error")
MAX_BODY_BYTES = 64 * 1024 * 1024  # NodeLists of 5000 nodes are ~30 MB
IMAGE_REPOSITORY = "scheduler-build/extender"
# The extender.one_write setting's variable under `scheduler-build`; the console script reads it too.
ONE_WRITE_ENV = "SCHEDULER_BUILD_EXTENDER_ONE_WRITE"
_OFF = ("0", "false", "no", "off")


def one_write_default(environ: dict[str, str]) -> bool:
    """OneWrite unless ONE_WRITE_ENV says 0/false/no/off (the console script's default for --one-write)."""
    return environ.get(ONE_WRITE_ENV, "1").strip().lower() not in _OFF


def default_image_tag() -> str:
    """The tag `inv image.extender` builds and `cluster.load --spec` loads when image.extender_tag is empty."""
    return f"{IMAGE_REPOSITORY}:{__version__}"


@dataclass
class TLSOptions:
    cert_file: str = ""
    key_file: str = ""
    client_ca_file: str = ""  # set: clients must present a certificate signed by it (mTLS)


@dataclass
class ServeConfig:
    """How the extender serves. These defaults are the only home of the extender's
    defaults: the console script's flags, the `extender.*` settings of
    `inv extender.serve` (settings_defaults) and the help texts read them."""

    host: str = "127.0.0.1"
    port: int = PORT
    kubeconfig: str = ""  # empty: $KUBECONFIG, ~/.kube/config, else in-cluster, else none (never ready)
    policy: str = "underlay-ip"
    url_prefix: str = "/"
    verbs: dict[str, str] = field(default_factory=lambda: {v: v for v in VERBS})  # empty path: verb disabled
    max_body_bytes: int = MAX_BODY_BYTES
    assume_ttl: float = 30.0  # seconds a pod the extender bound counts before the watch confirms it
    tls: TLSOptions = field(default_factory=TLSOptions)  # tls.client_ca_file set: mutual TLS
    log_level: str = "info"
    health_port: int = 0  # >0: plain-HTTP /healthz and /readyz on this port too (probes under mTLS)
    one_write: bool = True  # each response's head and body in one write (extender/one_write.py); off: plain httptools


def settings_defaults() -> dict[str, Any]:
    """ServeConfig's defaults as the flat `extender.*` settings table (settings.DEFAULTS)."""
    cfg = ServeConfig()
    return {
        "host": cfg.host, "port": cfg.port, "kubeconfig": cfg.kubeconfig, "policy": cfg.policy,
        "url_prefix": cfg.url_prefix, **{f"{verb}_verb": cfg.verbs[verb] for verb in VERBS},
        "max_body_bytes": cfg.max_body_bytes, "assume_ttl": cfg.assume_ttl,
        "tls_cert": cfg.tls.cert_file, "tls_key": cfg.tls.key_file, "tls_client_ca": cfg.tls.client_ca_file,
        "log_level": cfg.log_level, "one_write": cfg.one_write,
    }
