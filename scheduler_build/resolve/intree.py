"""Plugin names a Kubernetes version knows: its in-tree plugins and those a patch series adds.

In-tree names are read from that version's own source (names.go, through the
host Go toolchain's module cache), never from a hand-kept list.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from scheduler_build.golang import toolchain
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.resolve import patchfile

_CONST = re.compile(r'^\s*([A-Z][A-Za-z0-9_]*)\s*=\s*"([^"]+)"', re.M)
NAMES_GO = "pkg/scheduler/framework/plugins/names/names.go"


def parse_names_go(text: str) -> set[str]:
    """The string constants of names.go: one per in-tree plugin of that version."""
    return {value for _, value in _CONST.findall(text)}


def kubernetes_source(version: str) -> Path:
    """The k8s.io/kubernetes source of `version` in the Go module cache (downloaded if absent)."""
    return toolchain.module_dir("k8s.io/kubernetes", version)


def cached_in_tree_plugins(version: str, cache_root: Path) -> frozenset[str] | None:
    """The names when an earlier run cached them, else None (nothing is downloaded)."""
    cached = Path(cache_root) / "intree-plugins" / f"{version}.json"
    return frozenset(json.loads(cached.read_text())) if cached.is_file() else None


def in_tree_plugins(version: str, cache_root: Path) -> frozenset[str]:
    """In-tree plugin names of an exact version (v1.36.3), cached per version."""
    known = cached_in_tree_plugins(version, cache_root)
    if known is not None:
        return known
    cached = cache_root / "intree-plugins" / f"{version}.json"
    source = kubernetes_source(version) / NAMES_GO
    if not source.is_file():
        raise UserError(f"k8s.io/kubernetes@{version} has no {NAMES_GO}",
                        "this toolkit supports versions whose in-tree plugins are named there (1.19+)")
    names = parse_names_go(source.read_text())
    if not names:
        raise UserError(f"found no plugin names in {source}", "the file layout changed: report this")
    write_atomic(cached, json.dumps(sorted(names), indent=1))
    return frozenset(names)


_PLUGIN_DIR = re.compile(r"^pkg/scheduler/framework/plugins/[^/]+/[^/]+\.go$")
_ADDED_NAME = re.compile(r'^\s*(?:const\s+)?Name\s*=\s*"([^"]+)"')  # an added line, without its '+'
_ADDED_NAMES_GO = re.compile(r'^\s*[A-Z][A-Za-z0-9_]*\s*=\s*"([^"]+)"')


def patched_plugin_names(patches: list[Path] | tuple[Path, ...]) -> set[str]:
    """Plugin names a patch series adds to the in-tree registry.

    A patch that registers an in-tree plugin touches plugins/registry.go and
    adds a package under pkg/scheduler/framework/plugins/ declaring `Name = "..."`
    (or a constant in names/names.go). Only series that touch registry.go count:
    a name that is never registered would still be refused by the binary.
    """
    names: set[str] = set()
    registers = False
    for patch in patches:
        for changed in patchfile.parse(Path(patch)).files:
            target = (changed.new_path or "").split("k8s.io/kubernetes/", 1)[-1]
            registers = registers or target.endswith("pkg/scheduler/framework/plugins/registry.go")
            if target.endswith("_test.go"):
                continue
            if target.endswith("plugins/names/names.go"):
                pattern = _ADDED_NAMES_GO
            elif _PLUGIN_DIR.match(target):
                pattern = _ADDED_NAME
            else:
                continue
            names.update(m.group(1) for hunk in changed.hunks for line in hunk.added if (m := pattern.match(line)))
    return names if registers else set()
