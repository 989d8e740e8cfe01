"""Bounded YAML and JSON loading: every file the tool reads from a user goes through here.

A hostile or broken input is refused in well under a second with one line, before
it can cost memory or a RecursionError: the text's size, the nesting depth and the
size of the document once aliases are expanded ("billion laughs") are all capped.
Anchors and aliases stay usable for ordinary reuse; only expansion is bounded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 16 * 1024 * 1024  # kubeconfigs with embedded certificates are tens of KiB; specs a few
MAX_DEPTH = 100  # Kubernetes objects nest about 15 deep
MAX_NODES = 1_000_000  # values in the document with every alias expanded


class InputLimitError(ValueError):
    """The input exceeds a bound; the message says which and by how much (one line, no value shown)."""


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader with a nesting-depth cap while composing and an expanded-size cap per document."""

    max_depth = MAX_DEPTH
    max_nodes = MAX_NODES

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                mark = self.peek_event().start_mark
                raise InputLimitError(f"line {mark.line + 1}: nested more than {self.max_depth} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            _check_expanded(node, self.max_nodes)
        return node


def _check_expanded(root: yaml.Node, limit: int) -> None:
    """Count values as if every alias were copied out; each distinct node is visited once."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > limit:
            raise InputLimitError(f"aliases expand to more than {limit:,} values (an alias bomb?)")
        sizes[id(node)] = total
        return total

    size(root)


def check_size(text: str | bytes, max_bytes: int = MAX_BYTES) -> None:
    if len(text) > max_bytes:
        raise InputLimitError(f"{len(text):,} bytes is larger than the {max_bytes:,}-byte limit")


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """A file's text, refusing before reading when it is larger than `max_bytes`
    (OSError / UnicodeDecodeError pass through for the caller to word)."""
    size = Path(path).stat().st_size
    if size > max_bytes:
        raise InputLimitError(f"{size:,} bytes is larger than the {max_bytes:,}-byte limit")
    return Path(path).read_text(encoding="utf-8")


def load_yaml(text: str, loader: type[BoundedLoader] = BoundedLoader) -> Any:
    """One YAML document, bounded (yaml.YAMLError for syntax, InputLimitError for bounds)."""
    check_size(text)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass


_JSON_STRING = re.compile(rb'"(?:\\.|[^"\\])*"')
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def check_json_depth(data: str | bytes, max_depth: int = MAX_DEPTH) -> None:
    """Refuse JSON nested deeper than `max_depth` without parsing it (strings skipped)."""
    raw = data.encode() if isinstance(data, str) else data
    bare = _JSON_STRING.sub(b'""', raw)  # JSON strings hold no raw newline: line numbers survive
    depth = 0
    for match in _JSON_BRACKET.finditer(bare):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                line = bare.count(b"\n", 0, match.start()) + 1
                raise InputLimitError(f"line {line}: nested more than {max_depth} levels deep")
        else:
            depth -= 1


def load_json(text: str | bytes) -> Any:
    """JSON, bounded by size and depth (json.JSONDecodeError for syntax)."""
    check_size(text)
    check_json_depth(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _as_on_every_python(exc) from None


def _as_on_every_python(exc: json.JSONDecodeError) -> json.JSONDecodeError:
    """A trailing comma reported the same on every Python: at the comma, as 3.13 does
    (3.10 to 3.12 say "Expecting value" or "Expecting property name" at the bracket after it)."""
    doc, pos = exc.doc, exc.pos
    if exc.msg.startswith("Expecting") and doc[pos:pos + 1] in ("]", "}"):
        before = doc[:pos].rstrip()
        if before.endswith(","):
            kind = "array" if doc[pos] == "]" else "object"
            return json.JSONDecodeError(f"Illegal trailing comma before end of {kind}", doc, len(before) - 1)
    return exc
