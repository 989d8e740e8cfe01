"""Where a field path (`profiles[0].schedulerName`) sits in a YAML file: its line, for CI annotations.

Composes the file with the bounded loader (scheduler_build.safeyaml) and walks the node
tree; a path that cannot be followed gives the line of its deepest reachable part.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from scheduler_build import safeyaml

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_line(path: Path, field: str) -> int | None:
    """1-based line of `field` in the YAML file at `path`; None when the file cannot be read."""
    try:
        root = yaml.compose(safeyaml.read_text(Path(path)), Loader=safeyaml.BoundedLoader)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return None
    if root is None:
        return None
    node, line = root, root.start_mark.line + 1
    for key, index in _STEP.findall(field):
        if key and isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif index and isinstance(node, yaml.SequenceNode) and int(index) < len(node.value):
            node = node.value[int(index)]
            line = node.start_mark.line + 1
        else:
            break
    return line
