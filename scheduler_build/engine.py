"""The Docker engine, through the docker SDK with API-version negotiation.

The small interface the stages use: connect, build an image from a context
directory with its output streamed (an in-band error raises), and run a
container to completion with its logs streamed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import docker
import docker.errors

from scheduler_build.errors import UserError
from scheduler_build.progress import stream_line

ENGINE_HINT = "start the engine (`bash ci/setup.sh` installs and starts Debian's docker.io), or set DOCKER_HOST"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def connect(timeout: int = 600) -> docker.DockerClient:
    try:
        client = docker.from_env(version="auto", timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise UserError(f"cannot reach the Docker engine: {_short(exc)}", ENGINE_HINT) from None
    return client


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else exc.__class__.__name__


def image_or_none(client: docker.DockerClient, ref: str) -> Any:
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as exc:
        raise UserError(f"cannot inspect image {ref}: {_short(exc)}") from None


def build_image(
    client: docker.DockerClient,
    context: Path,
    tag: str,
    dockerfile: str = "Dockerfile",
    labels: dict[str, str] | None = None,
    buildargs: dict[str, str] | None = None,
    platform: str | None = None,
    on_line: Callable[[str], None] = stream_line,
) -> str:
    """Build `context` into `tag`, streaming output; raise on an in-band error. Returns the image ID."""
    image_id = ""
    stream = client.api.build(
        path=str(context),
        dockerfile=dockerfile,
        tag=tag,
        labels=labels or {},
        buildargs=buildargs or {},
        platform=platform,
        rm=True,
        forcerm=True,
        pull=False,
        network_mode="none",
        decode=True,
    )
    for chunk in stream:
        if "error" in chunk or "errorDetail" in chunk:
            detail = chunk.get("errorDetail", {}).get("message") or chunk.get("error")
            raise UserError(f"docker build of {tag} failed: {detail}")
        text = chunk.get("stream")
        if text:
            for line in text.splitlines():
                if line.strip():
                    on_line(_ANSI.sub("", line))
        aux = chunk.get("aux") or {}
        if "ID" in aux:
            image_id = aux["ID"]
    if not image_id:
        image_id = client.images.get(tag).id
    return image_id


def run_streaming(
    client: docker.DockerClient,
    image: str,
    command: list[str],
    *,
    mounts: list[docker.types.Mount],
    environment: dict[str, str],
    workdir: str,
    network: str = "none",
    on_line: Callable[[str], None] = stream_line,
    user: str | None = None,
) -> int:
    """Run `command` in a fresh container, stream its output, remove it; return the exit code."""
    try:
        container = client.containers.create(
            image,
            command=command,
            mounts=mounts,
            environment=environment,
            working_dir=workdir,
            network_mode=network,
            user=user,
            detach=True,
        )
    except docker.errors.APIError as exc:
        raise UserError(f"the Docker engine refused to create a container from {image}: {exc.explanation or _short(exc)}") from None
    try:
        container.start()
        buffer = b""
        for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                on_line(line.decode(errors="replace"))
        if buffer:
            on_line(buffer.decode(errors="replace"))
        return int(container.wait().get("StatusCode", 1))
    finally:
        try:
            container.remove(force=True)
        except docker.errors.APIError:
            pass


def pull(client: docker.DockerClient, ref: str) -> tuple[bool, str]:
    """Try to pull `ref`; return (ok, reason). Never required: callers fall back."""
    repo, _, tag = ref.rpartition(":") if ":" in ref.split("/")[-1] else (ref, "", "latest")
    try:
        client.images.pull(repo, tag=tag)
        return True, ""
    except docker.errors.DockerException as exc:
        return False, _short(exc)
