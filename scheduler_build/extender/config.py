"""The reference extender's configuration, a leaf: its defaults, verbs, log levels, port and image tag.

Core (settings, options, the spec's defaults, the task layer's help texts) reads these
without importing the extender's app or server, so `inv` never loads prometheus_client,
msgspec or uvicorn; the extender package builds on the same dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
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


def default_kubeconfig(environ: Any, home: str) -> str:
    """The extender's kubeconfig when none is given: $KUBECONFIG's first file, else ~/.kube/config, when it exists;
    empty: in-cluster, else none (the extender serves, never ready). Pure: its deciders pass the environment."""
    candidate = (environ.get("KUBECONFIG") or "").split(":")[0] or f"{home}/.kube/config"
    return candidate if Path(candidate).exists() else ""


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


def settings_rows(setting: Any, kind: Any) -> list[Any]:
    """The `extender.*` rows of the settings table (settings.SETTINGS), built with its Setting and Kind:
    ServeConfig's defaults with their meaning, kind and flag (this module imports nothing of core)."""
    cfg = ServeConfig()

    def row(key: str, default: Any, text: str, what: Any = None, flag: str | None = "") -> Any:
        return setting(f"extender.{key}", default, text, what, flag)

    return [
        row("host", cfg.host, "listen address"),
        row("port", cfg.port, "listen port, 0 for a free one", kind("port")),
        row("kubeconfig", cfg.kubeconfig, "kubeconfig to watch pods and nodes with; empty: $KUBECONFIG, "
            "~/.kube/config, in-cluster"),
        row("policy", cfg.policy, "placement policy"),
        row("url_prefix", cfg.url_prefix, "path prefix of the verbs, the urlPrefix's path"),
        *[row(f"{verb}_verb", cfg.verbs[verb], f"{verb} verb path, empty disables") for verb in VERBS],
        row("max_body_bytes", cfg.max_body_bytes, "largest request body accepted", kind("size", lo=1024)),
        row("assume_ttl", cfg.assume_ttl, "seconds a pod bound here counts before the watch confirms it",
            kind("duration", lo=0.001)),
        row("tls_cert", cfg.tls.cert_file, "serve HTTPS with this PEM certificate; empty: plain HTTP"),
        row("tls_key", cfg.tls.key_file, "PEM private key of the certificate; empty: in the cert file"),
        row("tls_client_ca", cfg.tls.client_ca_file, "require client certificates signed by this CA, mTLS; "
            "empty: none"),
        row("log_level", cfg.log_level, "debug, info, warning or error", kind("enum", choices=LOG_LEVELS)),
        row("one_write", cfg.one_write, "each response's head and body in one write; off: "
            "`inv extender.serve --no-one-write`, `scheduler-extender --no-one-write`, or "
            f"{ONE_WRITE_ENV}=0", flag="--no-one-write"),
    ]


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
