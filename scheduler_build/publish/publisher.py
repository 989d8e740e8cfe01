"""The publisher protocol, ko-shaped: a built artifact goes to one destination and comes back as references.

ko's `publish.Interface` takes a built image and returns where it landed. Here each destination is one
module of publish/ holding its publisher (registry.py, daemon.py, archive.py, chart.py); every image
destination takes the same `ImageArtifact` (the built layout and its record), publish/multi.py sends one
artifact to several in order, and flows/publishers.py composes them from a task's decided destinations
(inputs/publish.py). A conductor calls `publish` and never knows which destinations it has, so image.push
of a current dist/ layout touches no engine unless `--to` names the daemon.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from scheduler_build.errors import UserError
from scheduler_build.image.info import ImageInfo

Artifact = TypeVar("Artifact", contravariant=True)


@dataclass(frozen=True)
class ImageArtifact:
    """What every image destination takes: the OCI layout image.build wrote and its image-info.json record
    (the platforms, their local tags and digests, the image's own date)."""

    layout: Path
    info: ImageInfo

    @classmethod
    def of_layout(cls, layout: Path) -> ImageArtifact:
        """A layout on disk (dist/'s with --no-build, an extracted archive): its record read and checked."""
        if not (Path(layout) / "index.json").is_file():  # no layout at all: say that, not that its record is unreadable
            raise UserError(f"no built image under {layout}", "run `inv image.build` first")
        return cls(Path(layout), ImageInfo.of_layout(Path(layout)))


class Published(Protocol):
    """Where an artifact landed: references a user can pull or open, and the result as JSON data."""

    @property
    def references(self) -> list[str]: ...

    def as_dict(self) -> dict: ...


class Publisher(Protocol[Artifact]):
    """One destination. `Artifact` is what it takes: an `ImageArtifact` (registry, daemon, archive) or a
    chart's files (chart)."""

    def publish(self, artifact: Artifact) -> Published: ...
