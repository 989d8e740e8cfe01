"""The inputs of `builder.bootstrap` and `builder.show`: which Go, which image, decided before the engine is asked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build.inputs.common import cache_dir, option


@dataclass(frozen=True)
class BuilderInputs:
    k8s_version: str  # builder.show: the release whose go.mod sets the Go needed
    image: str  # builder.image; empty: golang:<go> if present or pullable, else bootstrapped
    pull: bool
    goroot: str  # empty: `go env GOROOT` of the host
    go: str  # an exact Go release; empty: the host's, or the go line's newest patch
    cache_dir: Path


def builder_inputs(c: Any, *, k8s_version: str | None = None, image: str | None = None, pull: Any = None,
                   goroot: str | None = None, go: str | None = None) -> BuilderInputs:
    """`pull`: the value for builder.pull (OFF for --no-pull, see _common.negated)."""
    return BuilderInputs(k8s_version=option(c, "k8s.version", k8s_version), image=option(c, "builder.image", image) or "",
                         pull=option(c, "builder.pull", pull), goroot=option(c, "builder.goroot", goroot) or "",
                         go=str(option(c, "builder.go", go) or ""), cache_dir=cache_dir(c))
