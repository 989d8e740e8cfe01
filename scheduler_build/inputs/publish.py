"""Where a task publishes, decided before any work: the destinations (`--to daemon,registry,archive=FILE`,
parsed by the DESTINATIONS table), the registry (target, credentials, TLS, retries) and the signing key.
flows/publishers.py composes the publishers from these records; a bad --to, key or target fails here, before
a build or an upload."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from scheduler_build import owned
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.errors import UserError
from scheduler_build.extender.config import default_image_tag
from scheduler_build import epoch
from scheduler_build.inputs.common import cache_dir, option, source_date_epoch
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import distribution
from scheduler_build.publish import sign as sign_stage
from scheduler_build.spec.model import Spec, default_repository


@dataclass(frozen=True)
class RegistryInputs:
    target: distribution.Target
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
    """`--to registry` (image.push's default destination)."""

    registry: RegistryInputs
    signing: SigningInputs | None  # None: no --sign
    to = "registry"  # not a field: the destination as --to names it


@dataclass(frozen=True)
class ChartPushInputs:
    """config.chart --push's destination."""

    registry: RegistryInputs
    signing: SigningInputs | None
    epoch: int  # the chart archive's member dates


@dataclass(frozen=True)
class ArchiveInputs:
    """`--to archive=FILE` (image.build --oci-archive FILE): the file, checked ours to replace before any work.
    Its members' date is the image's own (the artifact's record), not decided here."""

    path: Path
    cache_dir: Path  # where the file's digest is recorded (owned.py)
    replacing: bool  # an existing file there was not ours and --force replaces it

    @property
    def to(self) -> str:
        return f"archive={self.path}"


@dataclass(frozen=True)
class DaemonInputs:
    """`--to daemon` (image.build's default destination): the local engine, connected when it first loads."""

    to = "daemon"


# --- --to: the destinations, one row each (adding a destination adds a row here) ---------------------------

class Destination(NamedTuple):
    """A row of the table (a constant, not a decided record)."""

    name: str
    takes_file: bool  # NAME=FILE
    on_build: bool  # image.build may publish there: it needs no registry flag (image.push takes every row)

    @property
    def spelled(self) -> str:
        return f"{self.name}=FILE" if self.takes_file else self.name


DESTINATIONS = (Destination("daemon", takes_file=False, on_build=True),
                Destination("registry", takes_file=False, on_build=False),
                Destination("archive", takes_file=True, on_build=True))
BUILD_DESTINATIONS = tuple(d for d in DESTINATIONS if d.on_build)
TO_HELP = ("where the image goes, in order, comma-separated: daemon (the local engine), registry (the push), "
           "archive=FILE (the whole layout as one tar); the first failure stops the rest")


@dataclass(frozen=True)
class ToInputs:
    """One destination --to (or a shorthand) asks for, parsed; the records above are decided from it."""

    name: str  # a DESTINATIONS row
    file: str  # archive=FILE's FILE, else ""
    flag: str  # what named it: --to, or a shorthand (--oci-archive)


def parse_to(text: str, valid: Sequence[Destination] = DESTINATIONS, shorthands: Sequence[ToInputs] = ()
             ) -> list[ToInputs]:
    """--to's items in order, then each shorthand flag's; strictly: an unknown name, a duplicate, a file missing
    or not taken, or an empty item is one line naming it and listing the valid destinations."""
    rows = {d.name: d for d in valid}
    listing = "valid: " + ", ".join(d.spelled for d in valid)
    chosen: list[ToInputs] = []

    def refuse(what: str) -> UserError:
        return UserError(f"--to {text!r}: {what}", listing)

    items = text.split(",")
    for number, item in enumerate(items, 1):
        name, has_file, file = (part.strip() for part in item.partition("="))
        if not name and not has_file:
            raise refuse(f"item {number} of {len(items)} is empty" if len(items) > 1 else "names no destination")
        if name not in rows:
            raise refuse(f"unknown destination {name!r}")
        if rows[name].takes_file and not file:
            raise refuse(f"{name} needs a file: {rows[name].spelled}")
        if has_file and not rows[name].takes_file:
            raise refuse(f"{name} takes no value ({item.strip()!r})")
        chosen.append(ToInputs(name, file, "--to"))
    for extra in shorthands:
        chosen.append(extra)
    seen: set[str] = set()
    for each in chosen:
        if each.name in seen:
            named_by = f" (also by {each.flag})" if each.flag != "--to" else ""
            raise refuse(f"{each.name!r} is named twice{named_by}")
        seen.add(each.name)
    return chosen


def archive_inputs(c: Any, requested: ToInputs, force: bool | None = None) -> ArchiveInputs:
    """The archive's file, checked before any work: writable, and a file there is one we wrote unless --force
    (None: the task has no --force, image.push; its refusal names no flag it lacks)."""
    path = Path(requested.file)
    flag = "--oci-archive" if requested.flag == "--oci-archive" else "--to archive"
    try:
        replacing = owned.check_file(path, cache_dir(c), bool(force), flag)
    except UserError as exc:
        if force is None and "--force" in (exc.hint or ""):
            raise UserError(exc.message, "move it away, or name another file; nothing was changed") from None
        raise
    return ArchiveInputs(path, cache_dir(c), bool(replacing))


def build_destinations(c: Any, to: str | None, oci_archive: str | None, force: bool = False
                       ) -> list[DaemonInputs | ArchiveInputs]:
    """image.build's destinations: --to (default daemon: the engine holds what was built), then --oci-archive
    FILE, the shorthand of archive=FILE."""
    shorthand = [ToInputs("archive", oci_archive, "--oci-archive")] if oci_archive else []
    requested = parse_to(to if to is not None else "daemon", BUILD_DESTINATIONS, shorthand)
    return [DaemonInputs() if r.name == "daemon" else archive_inputs(c, r, force) for r in requested]


def registry_inputs(c: Any, target: distribution.Target, ca_cert: str | None = None, insecure: Any = False,
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


def chart_push_inputs(c: Any, *, target: distribution.Target, ca_cert: str | None = None, insecure: Any = False,
                      sign: bool = False, key: str | None = None) -> ChartPushInputs:
    """config.chart --push: the registry, the signing key (checked before any upload), the archive's date."""
    signed_with = signing(c, sign, key)
    return ChartPushInputs(registry_inputs(c, target, ca_cert, insecure, None), signed_with,
                           epoch.parse(source_date_epoch(c)) if source_date_epoch(c) else 0)


def push_target(c: Any, registry: str | None, spec: Spec | None) -> distribution.Target:
    """Where image.push pushes, by the one precedence rule: --registry, else the spec's image.repository (when it
    names one: the default scheduler-build/<name> is a local name and leaves it open), else registry.url."""
    named = spec.image.repository if spec is not None and spec.image.repository != default_repository(spec.name) else None
    return distribution.parse_target(option(c, "registry.url", registry, named, "image.repository") or "")


def push_inputs(c: Any, *, target: distribution.Target, ca_cert: str | None = None, insecure: Any = False,
                retries: Any = None, sign: bool = False, key: str | None = None) -> PushInputs:
    return PushInputs(registry_inputs(c, target, ca_cert, insecure, retries), signing(c, sign, key))


def push_destinations(c: Any, requested: list[ToInputs], *, spec: Spec | None, registry: str | None = None,
                      ca_cert: str | None = None, insecure: Any = False, retries: Any = None, sign: bool = False,
                      key: str | None = None) -> list[PushInputs | DaemonInputs | ArchiveInputs]:
    """image.push's destinations, in --to's order (parse_to; default registry). A registry flag without the
    registry among them is refused: it would be silently ignored."""
    if not any(r.name == "registry" for r in requested):
        given = [flag for flag, value in (("--registry", registry), ("--ca-cert", ca_cert), ("--insecure", insecure),
                                          ("--retries", retries), ("--sign", sign), ("--key", key)) if value]
        if given:
            raise UserError(f"{given[0]} applies to the registry, and --to {','.join(r.name for r in requested)} "
                            "does not name it", "add registry to --to, or drop the flag")

    def decided(r: ToInputs) -> PushInputs | DaemonInputs | ArchiveInputs:
        if r.name == "registry":
            return push_inputs(c, target=push_target(c, registry, spec), ca_cert=ca_cert, insecure=insecure,
                               retries=retries, sign=sign, key=key)
        return DaemonInputs() if r.name == "daemon" else archive_inputs(c, r)
    return [decided(r) for r in requested]


@dataclass(frozen=True)
class ExtenderImageInputs:
    """image.extender: the tag, debootstrap's mirror and the cache its base lives in."""

    tag: str
    mirror: str
    cache_dir: Path


def extender_image_inputs(c: Any, *, tag: str | None = None, mirror: str | None = None) -> ExtenderImageInputs:
    return ExtenderImageInputs(option(c, "image.extender_tag", tag) or default_image_tag(),
                               option(c, "image.debian_mirror", mirror), cache_dir(c))
