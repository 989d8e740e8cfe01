"""Files the tasks read at run time, shipped inside the package.

`templates/` and `dockerfiles/` sit at the top of the repository and are mapped to
the packages `scheduler_build.templates` and `scheduler_build.dockerfiles` by
pyproject.toml, so a wheel, an editable install and a checkout all read them the
same way: through importlib.resources, never through a path relative to this file.
In a checkout (and every git worktree of it) the symlinks scheduler_build/templates
and scheduler_build/dockerfiles make the same packages importable without an install.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; importlib.abc.Traversable serves 3.10 too
    from importlib.abc import Traversable

TEMPLATES_PACKAGE = "scheduler_build.templates"
DOCKERFILES_PACKAGE = "scheduler_build.dockerfiles"


def package() -> Traversable:
    """The installed scheduler_build package itself (what the extender image copies from)."""
    return resources.files("scheduler_build")


def templates() -> Traversable:
    return resources.files(TEMPLATES_PACKAGE)


def policy(name: str = "slsa-provenance.rego") -> bytes:
    """The bytes of templates/policies/<name>: the cosign verify-attestation policy users' gates run."""
    return templates().joinpath("policies", name).read_bytes()


def dockerfile(name: str) -> bytes:
    """The bytes of dockerfiles/<name> (e.g. "scheduler.Dockerfile")."""
    return resources.files(DOCKERFILES_PACKAGE).joinpath(name).read_bytes()
