"""Where a task publishes, decided before any work: the registry (target, credentials, TLS, retries) and the
signing key. flows/publishers.py composes the publisher from these; a bad key or target fails here, before
a build or an upload."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.inputs.common import option
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import registry as registry_stage
from scheduler_build.publish import sign as sign_stage


@dataclass(frozen=True)
class RegistryAccess:
    target: registry_stage.Target
    creds: tuple[str, str] | None  # docker's config for the host, else anonymous
    ca_cert: str  # empty: /etc/docker/certs.d/<host:port>/ca.crt, else the system CAs
    insecure: bool
    retries: int
    backoff: float


@dataclass(frozen=True)
class Signing:
    key_ref: str  # a key file (absolute) or env://VAR, checked
    cosign_cache: Path  # the pinned cosign is built there on first use, only if the push gets that far
    password: str  # $COSIGN_PASSWORD, else sign.password


@dataclass(frozen=True)
class PushInputs:
    """image.push's destination."""

    registry: RegistryAccess
    signing: Signing | None  # None: no --sign


@dataclass(frozen=True)
class ChartPushInputs:
    """config.chart --push's destination."""

    registry: RegistryAccess
    signing: Signing | None
    epoch: int  # the chart archive's member dates


@dataclass(frozen=True)
class ArchiveTarget:
    """image.build --oci-archive: the file, and the image's own date for its members."""

    path: Path
    epoch: int


@dataclass(frozen=True)
class DaemonTarget:
    """The local engine; the platforms a Preloader loaded while the image was assembled are not loaded again."""

    preloaded: frozenset[str]


def registry_access(c: Any, target: registry_stage.Target, ca_cert: str | None = None, insecure: Any = False,
                    retries: Any = None) -> RegistryAccess:
    """Flags, then the push.* settings, by the one precedence rule; the host's credentials from docker's config."""
    return RegistryAccess(target=target, creds=registry_auth.credentials(target.host),
                          ca_cert=option(c, "push.ca_cert", ca_cert) or "", insecure=option(c, "push.insecure", insecure),
                          retries=max(0, option(c, "push.retries", retries)), backoff=option(c, "push.backoff"))


def signing(c: Any, sign: bool, key: str | None) -> Signing | None:
    """With --sign: the key (checked now), the cosign cache and the key's password; else None."""
    if not sign:
        return None
    password = os.environ.get(cosign_tool.PASSWORD_ENV)
    config = c.config if hasattr(c, "config") else c
    return Signing(sign_stage.key_ref(option(c, "sign.key", key)), settings.cache_dir(config),
                   (option(c, "sign.password") or "") if password is None else password)


def push_inputs(c: Any, *, target: registry_stage.Target, ca_cert: str | None = None, insecure: Any = False,
                retries: Any = None, sign: bool = False, key: str | None = None) -> PushInputs:
    return PushInputs(registry_access(c, target, ca_cert, insecure, retries), signing(c, sign, key))
