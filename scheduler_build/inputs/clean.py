"""The inputs of `clean`: what to remove and where it lives, decided before anything is listed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import settings
from scheduler_build.inputs.common import cache_dir, option


@dataclass(frozen=True)
class CleanInputs:
    dist: bool  # published outputs under dist_dir (the default when nothing is chosen)
    cache: bool
    volume: bool
    images: bool
    dry_run: bool
    dist_dir: Path
    cache_dir: Path
    gocache_volume: str


def clean_inputs(c: Any, *, dist: bool = False, cache: bool = False, volume: bool = False, images: bool = False,
                 all: bool = False, dry_run: bool = False) -> CleanInputs:
    chosen = {"dist": dist or all, "cache": cache or all, "volume": volume or all, "images": images or all}
    if not any(chosen.values()):
        chosen["dist"] = True
    return CleanInputs(**{k: bool(v) for k, v in chosen.items()}, dry_run=bool(dry_run),
                       dist_dir=Path(option(c, "paths.dist_dir")), cache_dir=cache_dir(c),
                       gocache_volume=settings.gocache_volume(option(c, "build.gocache_volume")))
