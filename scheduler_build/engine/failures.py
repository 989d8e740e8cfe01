"""How a conversation with the container engine fails: one clear line, whatever the SDK raised.

Shared by engine.py (the engine) and container.py (one container of it)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import docker
import docker.errors
import requests
import urllib3.exceptions

from scheduler_build.errors import UserError

ENGINE_HINT = "start the engine (Debian: apt-get install -y docker.io, then dockerd), or set DOCKER_HOST"


# What a connection to an engine that went away raises (the SDK's own errors aside).
LOST = (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError)


@contextmanager
def talking(what: str) -> Iterator[None]:
    """One clear error when the engine is lost or refuses in the middle of `what`."""
    try:
        yield
    except docker.errors.APIError as exc:
        raise UserError(f"the Docker engine refused to {what}: {exc.explanation or short(exc)}") from None
    except (docker.errors.DockerException, *LOST) as exc:
        raise UserError(f"lost the Docker engine while trying to {what}: {short(exc)}", ENGINE_HINT) from None


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else exc.__class__.__name__
