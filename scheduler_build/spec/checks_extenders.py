"""`extenders`: HTTP extenders in the v1 Extender form, and the one-binder rule."""

from __future__ import annotations

import urllib.parse
from typing import Any

from scheduler_build.extender.config import PORT
from scheduler_build.spec.fields import Fields, is_integer, show
from scheduler_build.spec.formats import DURATION, HTTP_URL, URL_PATH_SEGMENT
from scheduler_build.spec.model import ReferenceExtender

EXTENDER_KEYS = ("urlPrefix", "filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb", "weight", "enableHTTPS",
                 "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable")
VERBS = ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb")
FLAGS = ("enableHTTPS", "nodeCacheCapable", "ignorable")
TLS_STRINGS = ("serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


def check_extenders(f: Fields, value: Any) -> list[dict]:
    out: list[dict] = []
    if value is None or f.seq("extenders", value) is None:
        return out
    for i, item in enumerate(value):
        p = f"extenders[{i}]"
        if f.mapping(p, item, EXTENDER_KEYS, required=("urlPrefix",)) is None:
            continue
        out.append(check_extender(f, p, item))
    return out


def check_extender(f: Fields, p: str, item: dict) -> dict:
    """One extender entry, as the scheduler's configuration takes it."""
    got: dict[str, Any] = {}
    url = f.optional(item, "urlPrefix", f"{p}.urlPrefix", lambda q, v: _url(f, q, f.string(
        q, v, HTTP_URL, "an http:// or https:// URL")))
    if url:
        got["urlPrefix"] = url
    for verb in VERBS:
        v = f.optional(item, verb, f"{p}.{verb}", lambda q, x: f.string(
            q, x, URL_PATH_SEGMENT, "a URL path segment such as filter"))
        if v:
            got[verb] = v
    _weight(f, p, item, got)
    for flag in FLAGS:
        b = f.optional(item, flag, f"{p}.{flag}", f.boolean)
        if b is not None:
            got[flag] = b
    if item.get("tlsConfig") is not None:
        _tls_config(f, p, item["tlsConfig"], got)
    if item.get("httpTimeout") is not None:
        timeout = _http_timeout(f, f"{p}.httpTimeout", item["httpTimeout"])
        if timeout:
            got["httpTimeout"] = timeout
    if item.get("managedResources") is not None:
        resources = check_managed_resources(f, f"{p}.managedResources", item["managedResources"])
        if resources is not None:
            got["managedResources"] = resources
    if not any(v in got for v in VERBS) and url:
        f.err(p, "sets no verb: give at least one of filterVerb, prioritizeVerb, preemptVerb, bindVerb")
    return got


def _weight(f: Fields, p: str, item: dict, got: dict) -> None:
    """weight: an integer, and > 0 when the extender prioritizes (its scores are multiplied by it)."""
    if item.get("weight") is not None:
        w = f.integer(f"{p}.weight", item["weight"])
        if w is not None:
            got["weight"] = w
    if "prioritizeVerb" in got:
        weight = item.get("weight")
        if weight is None:
            f.err(f"{p}.weight", "must be > 0 when prioritizeVerb is set, got nothing")
        elif is_integer(weight) and weight <= 0:
            f.err(f"{p}.weight", f"must be > 0 when prioritizeVerb is set, got {weight}")


def _tls_config(f: Fields, p: str, value: Any, got: dict) -> None:
    tls = f.mapping(f"{p}.tlsConfig", value, ("insecure", *TLS_STRINGS))
    if tls is None:
        return
    tls_got: dict[str, Any] = {}
    for key, val in tls.items():
        if key == "insecure":
            if f.boolean(f"{p}.tlsConfig.insecure", val) is not None:
                tls_got[key] = val
        elif key in TLS_STRINGS:
            if f.string(f"{p}.tlsConfig.{key}", val) is not None:
                tls_got[key] = val
    got["tlsConfig"] = tls_got
    if not got.get("enableHTTPS"):
        f.err(f"{p}.tlsConfig", "is only used with enableHTTPS: true")


def _http_timeout(f: Fields, path: str, value: Any) -> str | None:
    if isinstance(value, (int, float)):
        # A number is what a migrated Policy file would hold; say so instead of "must be a string".
        f.err(path, f"must be a duration string such as 5s, got the number {value} "
              "(Policy files gave nanoseconds: use inv config.migrate-policy)")
        return None
    return f.string(path, value, DURATION, "a duration such as 5s or 1m30s")


def check_managed_resources(f: Fields, path: str, value: Any) -> list[dict] | None:
    """managedResources: extended resources the extender manages (None when not a list)."""
    if f.seq(path, value) is None:
        return None
    resources = []
    for j, res in enumerate(value):
        rp = f"{path}[{j}]"
        if f.mapping(rp, res, ("name", "ignoredByScheduler"), required=("name",)) is None:
            continue
        entry: dict[str, Any] = {}
        if res.get("name") is not None and f.string(f"{rp}.name", res["name"]) is not None:
            entry["name"] = res["name"]
        if res.get("ignoredByScheduler") is not None and \
                f.boolean(f"{rp}.ignoredByScheduler", res["ignoredByScheduler"]) is not None:
            entry["ignoredByScheduler"] = res["ignoredByScheduler"]
        resources.append(entry)
    return resources


def check_binding_extenders(f: Fields, extenders: list[dict], ref: ReferenceExtender) -> None:
    """At most one extender binds (the spec's or the reference one): the scheduler takes one binder."""
    binders = [i for i, e in enumerate(extenders) if e.get("bindVerb")]
    if ref.enabled and ref.bind:
        binders.append(-1)
    if len(binders) > 1:
        first = "referenceExtender.bind" if binders[0] == -1 else f"extenders[{binders[0]}].bindVerb"
        for i in binders[1:]:
            where = "referenceExtender.bind" if i == -1 else f"extenders[{i}].bindVerb"
            f.err(where, f"only one extender may bind; {first} already does")


def _url(f: Fields, path: str, text: str | None) -> str | None:
    """urlPrefix parsed as a URL: http(s) scheme, a host, a port in 1..65535, no whitespace,
    no query or fragment (kube-scheduler appends /<verb> to it)."""
    if text is None:
        return None
    problem = ""
    if any(ch.isspace() for ch in text):
        problem = "contains whitespace"
    else:
        parsed = urllib.parse.urlsplit(text)
        try:
            port = parsed.port
        except ValueError:
            port, problem = None, "has a port outside 1..65535 (or not a number)"
        if not problem and not parsed.hostname:
            problem = "has no host"
        elif not problem and port == 0:
            problem = "has port 0"
        elif not problem and (parsed.query or parsed.fragment or "?" in text or "#" in text):
            problem = "has a query or fragment (the verb is appended to the path)"
    if problem:
        f.err(path, f"{show(text)} {problem}; use e.g. http://127.0.0.1:{PORT}/scheduler")
        return None
    return text
