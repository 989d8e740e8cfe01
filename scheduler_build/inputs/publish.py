"""Where a task publishes, decided before any work: the registry (target, credentials, TLS, retries) and the
signing key. flows/publishers.py composes the publisher from these; a bad key or target fails here, before
a build or an upload."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.engine import credentials as registry_auth
from scheduler_build.extender.config import default_image_tag
from scheduler_build import epoch
from scheduler_build.inputs.common import cache_dir, option, source_date_epoch
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import registry as registry_stage
from scheduler_build.publish import sign as sign_stage
from scheduler_build.spec.model import Spec, default_repository


@dataclass(frozen=True)
class RegistryInputs:
    target: registry_stage.Target
    creds: tuple[str, str] | None  # docker's config for the host, else anonymous
    ca_cert: str  # empty: /etc/docker/certs.d/<host:port>/ca.crt, else the system CAs
    insecure: bool
    retries: int
    backoff: float


@dataclass(frozen=True)
class CosignInputs:
    """What cosign runs with: image.keygen, image.verify, and every signing."""

    cache_dir: Path  # the pinned cosign is built there on first use, only if a task gets that far
    password: str  # $COSIGN_PASSWORD, else sign.password
    environment: dict[str, str]  # what cosign inherits (its password and registry config are set apart)


@dataclass(frozen=True)
class SigningInputs:
    key_ref: str  # a key file (absolute) or env://VAR, checked
    cosign: CosignInputs


@dataclass(frozen=True)
class PushInputs:
    """image.push's destination."""

    registry: RegistryInputs
    signing: SigningInputs | None  # None: no --sign


@dataclass(frozen=True)
class ChartPushInputs:
    """config.chart --push's destination."""

    registry: RegistryInputs
    signing: SigningInputs | None
    epoch: int  # the chart archive's member dates


@dataclass(frozen=True)
class ArchiveInputs:
    """image.build --oci-archive: the file, and the image's own date for its members."""

    path: Path
    epoch: int


@dataclass(frozen=True)
class DaemonInputs:
    """The local engine; the platforms a Preloader loaded while the image was assembled are not loaded again."""

    preloaded: frozenset[str]


def registry_inputs(c: Any, target: registry_stage.Target, ca_cert: str | None = None, insecure: Any = False,
                    retries: Any = None) -> RegistryInputs:
    """Flags, then the push.* settings, by the one precedence rule; the host's credentials from docker's config."""
    return RegistryInputs(target=target, creds=registry_auth.credentials(target.host),
                          ca_cert=option(c, "push.ca_cert", ca_cert) or "", insecure=option(c, "push.insecure", insecure),
                          retries=max(0, option(c, "push.retries", retries)), backoff=option(c, "push.backoff"))


def cosign_inputs(c: Any) -> CosignInputs:
    """The key's password: $COSIGN_PASSWORD when set (even empty), else sign.password; the one home of that rule."""
    password = os.environ.get(cosign_tool.PASSWORD_ENV)
    return CosignInputs(cache_dir(c), (option(c, "sign.password") or "") if password is None else password,
                        dict(os.environ))


def key_ref(text: str, what: str = "--key", public: bool = False) -> str:
    """A signing or verifying key, checked now (an env://VAR key against this environment)."""
    return sign_stage.key_ref(text, dict(os.environ), what, public=public)


def public_key(c: Any, key: str | None) -> str:
    """image.verify's key: --key, else sign.public_key; checked now."""
    return key_ref(option(c, "sign.public_key", key), "--key", public=True)


def signing(c: Any, sign: bool, key: str | None) -> SigningInputs | None:
    """With --sign: the key (checked now) and what cosign runs with; else None."""
    if not sign:
        return None
    return SigningInputs(key_ref(option(c, "sign.key", key)), cosign_inputs(c))


def chart_push_inputs(c: Any, *, target: registry_stage.Target, ca_cert: str | None = None, insecure: Any = False,
                      sign: bool = False, key: str | None = None) -> ChartPushInputs:
    """config.chart --push: the registry, the signing key (checked before any upload), the archive's date."""
    signed_with = signing(c, sign, key)
    return ChartPushInputs(registry_inputs(c, target, ca_cert, insecure, None), signed_with,
                           epoch.parse(source_date_epoch(c)) if source_date_epoch(c) else 0)


def push_target(c: Any, registry: str | None, spec: Spec | None) -> registry_stage.Target:
    """Where image.push pushes, by the one precedence rule: --registry, else the spec's image.repository (when it
    names one: the default scheduler-build/<name> is a local name and leaves it open), else registry.url."""
    named = spec.image.repository if spec is not None and spec.image.repository != default_repository(spec.name) else None
    return registry_stage.parse_target(option(c, "registry.url", registry, named, "image.repository") or "")


def push_inputs(c: Any, *, target: registry_stage.Target, ca_cert: str | None = None, insecure: Any = False,
                retries: Any = None, sign: bool = False, key: str | None = None) -> PushInputs:
    return PushInputs(registry_inputs(c, target, ca_cert, insecure, retries), signing(c, sign, key))


@dataclass(frozen=True)
class ExtenderImageInputs:
    """image.extender: the tag, debootstrap's mirror and the cache its base lives in."""

    tag: str
    mirror: str
    cache_dir: Path


def extender_image_inputs(c: Any, *, tag: str | None = None, mirror: str | None = None) -> ExtenderImageInputs:
    return ExtenderImageInputs(option(c, "image.extender_tag", tag) or default_image_tag(),
                               option(c, "image.debian_mirror", mirror), cache_dir(c))
