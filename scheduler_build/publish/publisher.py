"""The publisher protocol, ko-shaped: a built artifact goes to one destination and comes back as references.

ko's `publish.Interface` takes a built image and returns where it landed; here each destination is one small
class in publish/publishers/ (registry, daemon, archive, chart), and flows/publishers.py composes the one a
task's decided inputs ask for. A conductor calls `publish` and never knows which destination it has, so
image.push of a current dist/ layout touches no engine: only the daemon publisher talks to one.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

Artifact = TypeVar("Artifact", contravariant=True)


class Published(Protocol):
    """Where an artifact landed: references a user can pull or open, and the result as JSON data."""

    @property
    def references(self) -> list[str]: ...

    def as_dict(self) -> dict: ...


class Publisher(Protocol[Artifact]):
    """One destination. `Artifact` is what it takes: an image layout directory (registry, archive), an
    assembled image (daemon: it knows which platforms were loaded early) or a chart's files (chart)."""

    def publish(self, artifact: Artifact) -> Published: ...
