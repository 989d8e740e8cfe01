"""Kubernetes resource quantities as numbers (pure): "100m" -> 0.1, "1Gi" -> 1073741824."""

from __future__ import annotations

import re

_QUANTITY = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:[eE]([+-]?[0-9]+))?(m|k|Ki|Mi|Gi|Ti|Pi|Ei|M|G|T|P|E|n|u)?$")
_SUFFIX = {
    None: 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40, "Pi": 2.0 ** 50, "Ei": 2.0 ** 60,
}


def parse(value: object) -> float | None:
    """The quantity's value, or None when it is not a quantity (a bool is not one)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str) or len(value) > 64:
        return None
    match = _QUANTITY.match(value.strip())
    if not match:
        return None
    number = float(match[1]) * (10.0 ** int(match[2]) if match[2] else 1.0)
    return number * _SUFFIX[match[3]]
