"""`referenceExtender`: the bundled Python extender, deployed beside the scheduler when enabled."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields
from scheduler_build.spec.formats import IMAGE_REF
from scheduler_build.spec.model import ReferenceExtender
from scheduler_build.spec.checks_extenders import check_managed_resources

REFERENCE_EXTENDER_KEYS = ("enabled", "image", "port", "replicas", "nodeCacheCapable", "weight", "ignorable",
                           "filter", "prioritize", "preempt", "bind", "httpTimeout", "managedResources", "tls")
# YAML key -> ReferenceExtender attribute, for the booleans.
_FLAGS = (("enabled", "enabled"), ("nodeCacheCapable", "node_cache_capable"), ("ignorable", "ignorable"),
          ("filter", "filter"), ("prioritize", "prioritize"), ("preempt", "preempt"), ("bind", "bind"),
          ("tls", "tls"))
# YAML key -> (attribute, lowest allowed, highest allowed), for the integers.
_INTEGERS = (("port", "port", 1, 65535), ("replicas", "replicas", 1, None), ("weight", "weight", 1, None))


def check_reference_extender(f: Fields, value: Any) -> ReferenceExtender:
    default = ReferenceExtender()
    if value is None or f.mapping("referenceExtender", value, REFERENCE_EXTENDER_KEYS) is None:
        return default
    p = "referenceExtender"
    fields: dict[str, Any] = {}
    for key, attr in _FLAGS:
        b = f.optional(value, key, f"{p}.{key}", f.boolean)
        if b is not None:
            fields[attr] = b
    img = f.optional(value, "image", f"{p}.image", lambda q, v: f.string(
        q, v, IMAGE_REF, "an image reference such as acme/extender:1.0"))
    if img:
        fields["image"] = img
    for key, attr, lo, hi in _INTEGERS:
        got = f.optional(value, key, f"{p}.{key}", lambda q, v: f.integer(q, v, lo=lo, hi=hi))
        if got is not None:
            fields[attr] = got
    timeout = f.optional(value, "httpTimeout", f"{p}.httpTimeout", f.duration)
    if timeout:
        fields["http_timeout"] = timeout
    if value.get("managedResources") is not None:
        resources = check_managed_resources(f, f"{p}.managedResources", value["managedResources"])
        fields["managed_resources"] = tuple(resources or ())
    ref = ReferenceExtender(**{**default.__dict__, **fields})
    if ref.enabled and not ref.image:
        f.err(f"{p}.image", "is required when the reference extender is enabled")
    if ref.enabled and not (ref.filter or ref.prioritize or ref.preempt or ref.bind):
        f.err(p, "enables no verb: set at least one of filter, prioritize, preempt, bind")
    return ref
