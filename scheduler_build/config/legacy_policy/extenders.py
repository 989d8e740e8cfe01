"""Legacy Policy extenders -> v1 `extenders` entries, field by field.

Go's JSON decoding ignored case, so legacy keys are matched case-insensitively;
`enableHttps` becomes `enableHTTPS` and an integer-nanosecond `httpTimeout` a
duration string. Unknown fields become warnings, never silent drops.
"""

from __future__ import annotations

from typing import Any, Callable

from scheduler_build.config.legacy_policy.tables import EXTENDER_FIELDS, POLICY_HINT, TLS_FIELDS, Note
from scheduler_build.errors import UserError
from scheduler_build.spec import DURATION

_SKIP = object()  # a converter's answer: leave the field out


def duration(nanoseconds: int) -> str:
    """Integer nanoseconds -> a Go duration string (30000000000 -> 30s, 1500000000 -> 1.5s)."""
    for unit, size in (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if nanoseconds % size == 0:
            return f"{nanoseconds // size}{unit}"
    if nanoseconds >= 10**9:
        return f"{nanoseconds / 10**9:g}s"
    return f"{nanoseconds}ns"


def _string(where: str, value: Any, warnings: list[str]) -> Any:
    if value in ("", None):
        return _SKIP  # the legacy API wrote unused verbs as "": v1 omits them
    if not isinstance(value, str):
        raise UserError(f"{where}: must be a string, got {value!r}", POLICY_HINT)
    return value


def _timeout(where: str, value: Any, warnings: list[str]) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UserError(f"{where}: must be integer nanoseconds, got {value!r}", "e.g. 30000000000 for 30s")
    if isinstance(value, int):
        if value < 0:
            raise UserError(f"{where}: must not be negative, got {value}")
        return duration(value) if value else _SKIP
    if not DURATION.match(value):
        raise UserError(f"{where}: {value!r} is neither nanoseconds nor a duration", "e.g. 30000000000 or 30s")
    return value


def _weight(where: str, value: Any, warnings: list[str]) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where}: must be an integer, got {value!r}")
    return value


def _flag(where: str, value: Any, warnings: list[str]) -> Any:
    if not isinstance(value, bool):
        raise UserError(f"{where}: must be true or false, got {value!r}")
    return value


def _tls(where: str, value: Any, warnings: list[str]) -> Any:
    if value is None:
        return _SKIP
    if not isinstance(value, dict):
        raise UserError(f"{where}: must be a mapping, got {value!r}")
    tls: dict[str, Any] = {}
    for key, item in value.items():
        target = TLS_FIELDS.get(str(key).lower())
        if target is None:
            warnings.append(f"{where.rsplit('.', 1)[0]}.tlsConfig.{key}: no such TLS field in v1; dropped")
        elif item not in ("", None):
            tls[target] = item
    return tls or _SKIP


def _managed_resources(where: str, value: Any, warnings: list[str]) -> Any:
    if value is None:
        return _SKIP
    if not isinstance(value, list):
        raise UserError(f"{where}: must be a list, got {value!r}")
    resources = []
    for j, res in enumerate(value):
        if not isinstance(res, dict):
            raise UserError(f"{where}[{j}]: must be a mapping, got {res!r}")
        entry: dict[str, Any] = {}
        for key, item in res.items():
            lowered = str(key).lower()
            if lowered == "name":
                entry["name"] = item
            elif lowered == "ignoredbyscheduler":
                entry["ignoredByScheduler"] = bool(item)
            else:
                warnings.append(f"{where}[{j}].{key}: no such field in v1; dropped")
        resources.append(entry)
    return resources or _SKIP


CONVERTERS: dict[str, Callable[[str, Any, list[str]], Any]] = {
    "urlPrefix": _string, "filterVerb": _string, "preemptVerb": _string, "prioritizeVerb": _string,
    "bindVerb": _string, "httpTimeout": _timeout, "weight": _weight, "enableHTTPS": _flag,
    "nodeCacheCapable": _flag, "ignorable": _flag, "tlsConfig": _tls, "managedResources": _managed_resources,
}


def convert_extender(index: int, legacy: Any, warnings: list[str]) -> dict | None:
    """One legacy extender -> its v1 entry; what has no equivalent is appended to `warnings`."""
    where = f"extenders[{index}]"
    if not isinstance(legacy, dict):
        raise UserError(f"{where}: must be a mapping, got {type(legacy).__name__}", POLICY_HINT)
    out: dict[str, Any] = {}
    for key, value in legacy.items():
        target = EXTENDER_FIELDS.get(str(key).lower())
        if target is None:
            warnings.append(f"{where}.{key}: no such field in v1 extenders; dropped (value {value!r})")
            continue
        converted = CONVERTERS[target](f"{where}.{key}", value, warnings)
        if converted is not _SKIP:
            out[target] = converted
    if "urlPrefix" not in out:
        raise UserError(f"{where}: has no urlPrefix", "every extender needs the base URL it is reached at")
    if out.get("prioritizeVerb") and out.get("weight", 0) <= 0:
        warnings.append(f"{where}.weight: {out.get('weight', 0)} with a prioritizeVerb is invalid in v1 "
                        "(the legacy validation refused it as well); set to 1, the smallest valid weight")
        out["weight"] = 1
    if out.get("tlsConfig") and not out.get("enableHTTPS"):
        warnings.append(Note(f"{where}.tlsConfig: set without enableHttps, so it was never used; kept as is"))
    return out
