"""Have the local engine hold an assembled image under its local tags (`docker load` of the layout's bytes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler_build.publish import daemon as daemon_stage

if TYPE_CHECKING:  # the result type only: publishing never assembles
    from scheduler_build.engine import Engine
    from scheduler_build.image.assemble import ImageResult


@dataclass(frozen=True)
class Loaded:
    references: list[str]  # the local tags the engine holds
    loaded: bool  # False: the engine held them already

    def as_dict(self) -> dict:
        return {"references": self.references, "loaded": self.loaded}


@dataclass(frozen=True)
class DaemonPublisher:
    preloaded: frozenset[str]  # platforms a daemon.Preloader loaded while the image was assembled
    engine: "Engine | None"  # None: connect when publishing (the only publisher that needs an engine)

    def publish(self, artifact: "ImageResult") -> Loaded:
        loaded = daemon_stage.publish(artifact, self.engine, self.preloaded)
        return Loaded(sorted({tag for p in artifact.platforms for tag in p.local_tags}), loaded)
