"""Write an image layout as one tar (`image.build --oci-archive`), for an air-gapped transfer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scheduler_build.progress import phase
from scheduler_build.publish import archive as archive_stage


@dataclass(frozen=True)
class Archived:
    path: Path

    @property
    def references(self) -> list[str]:
        return [str(self.path)]

    def as_dict(self) -> dict:
        return {"references": self.references}


@dataclass(frozen=True)
class ArchivePublisher:
    path: Path
    epoch: int  # every member's mtime: the image's own date, so the tar is reproducible

    def publish(self, artifact: Path) -> Archived:
        with phase("image.archive", str(self.path)):
            return Archived(archive_stage.write(artifact, self.path, self.epoch))
