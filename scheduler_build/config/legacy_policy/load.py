"""Reading a legacy Policy: a JSON or YAML file, or a ConfigMap holding one (key policy.cfg)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from scheduler_build import safeyaml
from scheduler_build.config.legacy_policy.tables import POLICY_HINT
from scheduler_build.errors import UserError


# `// ...` lines and `/* ... */` blocks before the first value: still JSON (refused at the comment's line).
_LEADING_COMMENTS = re.compile(r"^(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*", re.S)


def parse_text(text: str, source: str) -> Any:
    """JSON when it looks like JSON (errors with line and column), else YAML (same)."""
    stripped = text.lstrip()
    if not stripped:
        raise UserError(f"{source}: the file is empty", POLICY_HINT)
    try:
        return _parse(text, source, _LEADING_COMMENTS.sub("", stripped)[:1] in ("{", "["))
    except safeyaml.InputLimitError as exc:
        raise UserError(f"{source}: refused: {exc}", "a Policy is a few KiB of plain JSON or YAML") from None


def _parse(text: str, source: str, as_json: bool) -> Any:
    if as_json:
        try:
            return safeyaml.load_json(text)
        except json.JSONDecodeError as exc:
            if text.startswith(("//", "/*"), exc.pos):
                raise UserError(f"{source}: line {exc.lineno}, column {exc.colno}: a comment; JSON has none",
                                "remove the comment (or write the Policy as YAML, where # starts one)") from None
            raise UserError(f"{source}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}",
                            "fix the JSON syntax (a trailing comma or a missing quote is typical)") from None
    try:
        return safeyaml.load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise UserError(f"{source}: {where}invalid YAML: {exc.problem or exc}", POLICY_HINT) from None
    except yaml.YAMLError as exc:
        raise UserError(f"{source}: invalid YAML: {exc}", POLICY_HINT) from None


def load(path: Path, configmap_key: str = "") -> tuple[dict, str]:
    """Read a Policy file or a ConfigMap holding one; return (policy, kind of source)."""
    path = Path(path)
    try:
        text = safeyaml.read_text(path)
    except safeyaml.InputLimitError as exc:
        raise UserError(f"{path}: refused: {exc}", "a Policy is a few KiB of plain JSON or YAML") from None
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", "pass the Policy file (JSON or YAML) or its ConfigMap") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    doc = parse_text(text, str(path))
    if isinstance(doc, dict) and doc.get("kind") == "ConfigMap":
        data = doc.get("data") or {}
        if not isinstance(data, dict) or not data:
            raise UserError(f"{path}: the ConfigMap has no data", "the Policy lives under data, usually as policy.cfg")
        if configmap_key:
            if configmap_key not in data:
                raise UserError(f"{path}: the ConfigMap has no key {configmap_key!r}", f"keys: {', '.join(sorted(data))}")
            key = configmap_key
        elif "policy.cfg" in data:
            key = "policy.cfg"
        elif len(data) == 1:
            key = next(iter(data))
        else:
            raise UserError(f"{path}: the ConfigMap has several keys ({', '.join(sorted(data))}) and none is policy.cfg",
                            "pass --configmap-key KEY")
        if not isinstance(data[key], str):
            raise UserError(f"{path}: data[{key!r}] is not a string", "ConfigMap data values are strings")
        policy = parse_text(data[key], f"{path}: data[{key!r}]")
        kind = "ConfigMap"
    else:
        if configmap_key:  # silently ignoring it would migrate what the user did not point at
            raise UserError(f"{path}: --configmap-key {configmap_key!r} given, but the file is a Policy, not a ConfigMap",
                            "drop --configmap-key, or pass the ConfigMap that holds the Policy")
        policy, kind = doc, "Policy"
    if not isinstance(policy, dict):
        raise UserError(f"{path}: a Policy must be a mapping, got {type(policy).__name__}", POLICY_HINT)
    if policy.get("kind") not in (None, "Policy"):
        raise UserError(f"{path}: kind is {policy.get('kind')!r}, not Policy", POLICY_HINT)
    return policy, kind
