"""Every task of an invoke namespace with its dotted name (`image.push`), for tests that check all of them."""

from __future__ import annotations

from collections.abc import Iterator

from invoke import Collection, Task


def walk(collection: Collection, prefix: str = "") -> Iterator[tuple[str, Task]]:
    for name, task in collection.tasks.items():
        yield prefix + name, task
    for name, sub in collection.collections.items():
        yield from walk(sub, f"{prefix}{name}.")
