"""The container engine: the one edge every stage reaches Docker through.

A small interface in the shape of repo2docker's ContainerEngine: `images`,
`inspect_image`, `build`, `run`, `load`, `pull`, with plain data in and out
(`Image`, `Mount`), so no stage touches the docker SDK's clients directly. The
Docker engine is reached through the docker SDK with API-version negotiation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

import docker
import docker.errors
import docker.types

from scheduler_build.errors import UserError
from scheduler_build.progress import stream_line

ENGINE_HINT = "start the engine (Debian: apt-get install -y docker.io, then dockerd), or set DOCKER_HOST"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Image:
    """What the stages read of a local image."""

    id: str
    tags: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    env: tuple[str, ...] = ()
    size: int = 0  # bytes, as the engine reports it

    @property
    def short_id(self) -> str:
        return self.id.split(":", 1)[-1][:12]


@dataclass(frozen=True)
class Mount:
    """A bind mount of a host path, or a named volume (volume=True), at `target`."""

    target: str
    source: str
    read_only: bool = False
    volume: bool = False


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else exc.__class__.__name__


def _image(sdk_image: Any) -> Image:
    config = sdk_image.attrs.get("Config") or {}
    return Image(id=sdk_image.id, tags=tuple(sdk_image.tags or ()), labels=dict(config.get("Labels") or {}),
                 env=tuple(config.get("Env") or ()), size=int(sdk_image.attrs.get("Size") or 0))


class Engine:
    """The Docker engine behind the small interface above."""

    def __init__(self, client: docker.DockerClient):
        self._client = client

    def version(self) -> dict:
        return self._client.version()

    def inspect_image(self, ref: str) -> Image | None:
        """The local image `ref`, or None when the engine has no such image."""
        try:
            return _image(self._client.images.get(ref))
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.APIError as exc:
            raise UserError(f"cannot inspect image {ref}: {_short(exc)}") from None

    def images(self, repository: str | None = None) -> list[Image]:
        return [_image(i) for i in self._client.images.list(name=repository)]

    def build(self, context: Path, tag: str, dockerfile: str = "Dockerfile", labels: dict[str, str] | None = None,
              buildargs: dict[str, str] | None = None, platform: str | None = None,
              on_line: Callable[[str], None] = stream_line) -> str:
        """Build `context` into `tag` with no network, streaming output; raise on an in-band error.

        Returns the image ID. The engine reports build errors in the stream, not
        as an HTTP error, so every chunk is checked.
        """
        image_id = ""
        stream = self._client.api.build(
            path=str(context), dockerfile=dockerfile, tag=tag, labels=labels or {}, buildargs=buildargs or {},
            platform=platform, rm=True, forcerm=True, pull=False, network_mode="none", decode=True,
        )
        for chunk in stream:
            if "error" in chunk or "errorDetail" in chunk:
                detail = chunk.get("errorDetail", {}).get("message") or chunk.get("error")
                raise UserError(f"docker build of {tag} failed: {detail}")
            for line in (chunk.get("stream") or "").splitlines():
                if line.strip():
                    on_line(_ANSI.sub("", line))
            image_id = (chunk.get("aux") or {}).get("ID", image_id)
        return image_id or self._client.images.get(tag).id

    def run(self, image: str, command: list[str], *, mounts: list[Mount], environment: dict[str, str],
            workdir: str, network: str = "none", user: str | None = None,
            on_line: Callable[[str], None] = stream_line) -> int:
        """Run `command` in a fresh container, stream its output, remove it; return the exit code."""
        sdk_mounts = [docker.types.Mount(m.target, m.source, type="volume" if m.volume else "bind",
                                         read_only=m.read_only) for m in mounts]
        try:
            container = self._client.containers.create(
                image, command=command, mounts=sdk_mounts, environment=environment, working_dir=workdir,
                network_mode=network, user=user, detach=True,
            )
        except docker.errors.APIError as exc:
            raise UserError(f"the Docker engine refused to create a container from {image}: "
                            f"{exc.explanation or _short(exc)}") from None
        try:
            container.start()
            _stream(container.logs(stream=True, follow=True, stdout=True, stderr=True), on_line)
            return int(container.wait().get("StatusCode", 1))
        finally:
            try:
                container.remove(force=True)
            except docker.errors.APIError:
                pass

    def ensure_running(self, name: str, image: str, *, mounts: list[Mount], labels: dict[str, str],
                       network: str = "none") -> str:
        """The running container `name` (`sleep infinity` in `image`), created or started if need be."""
        try:
            container = self._client.containers.get(name)
        except docker.errors.NotFound:
            sdk_mounts = [docker.types.Mount(m.target, m.source, type="volume" if m.volume else "bind",
                                             read_only=m.read_only) for m in mounts]
            try:
                container = self._client.containers.create(image, command=["sleep", "infinity"], name=name, mounts=sdk_mounts,
                                                           labels=labels, network_mode=network, detach=True)
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: another build created it first
                    raise UserError(f"the Docker engine refused to create {name} from {image}: "
                                    f"{exc.explanation or _short(exc)}") from None
                container = self._client.containers.get(name)
        if container.status != "running":
            container.start()
        return container.id

    def exec(self, container: str, command: list[str], *, environment: dict[str, str], workdir: str,
             on_line: Callable[[str], None] = stream_line) -> int:
        """Run `command` in the running `container`, stream its output; return the exit code."""
        api = self._client.api
        created = api.exec_create(container, command, environment=environment, workdir=workdir)
        _stream(api.exec_start(created["Id"], stream=True), on_line)
        return int(api.exec_inspect(created["Id"]).get("ExitCode") or 0)

    def load(self, archive: IO[bytes], what: str) -> set[str]:
        """`docker load` a Docker archive; returns the loaded image IDs."""
        try:
            return {image.id for image in self._client.images.load(archive)}
        except docker.errors.DockerException as exc:
            raise UserError(f"docker load of {what} failed: {_short(exc)}") from None

    def pull(self, ref: str) -> tuple[bool, str]:
        """Try to pull `ref`; return (ok, reason). Never required: callers fall back."""
        repo, _, tag = ref.rpartition(":") if ":" in ref.split("/")[-1] else (ref, "", "latest")
        try:
            self._client.images.pull(repo, tag=tag)
            return True, ""
        except docker.errors.DockerException as exc:
            return False, _short(exc)

    def remove_containers(self, labels: dict[str, str]) -> int:
        """Force-remove the containers carrying all of `labels` (ours only); returns how many."""
        found = self._client.containers.list(all=True, filters={"label": [f"{k}={v}" for k, v in labels.items()]})
        for container in found:
            container.remove(force=True)
        return len(found)

    def remove_volume(self, name: str) -> bool:
        """Remove a named volume; False when there is none."""
        try:
            self._client.volumes.get(name).remove(force=True)
            return True
        except docker.errors.NotFound:
            return False
        except docker.errors.APIError as exc:
            raise UserError(f"cannot remove volume {name}: {exc.explanation or _short(exc)}",
                            "stop the containers using it (`docker ps -a --filter volume=" + name + "`)") from None

    def volume_size(self, name: str) -> int | None:
        """Bytes a named volume holds (the engine's disk-usage report), None when there is no such volume."""
        try:
            volumes = self._client.df().get("Volumes") or []
        except docker.errors.APIError as exc:
            raise UserError(f"cannot read the engine's disk usage: {exc.explanation or _short(exc)}") from None
        for volume in volumes:
            if volume.get("Name") == name:
                return int((volume.get("UsageData") or {}).get("Size") or 0)
        return None

    def remove_image(self, ref: str) -> None:
        """Remove (untag) one local image reference."""
        try:
            self._client.images.remove(ref)
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as exc:
            raise UserError(f"cannot remove image {ref}: {exc.explanation or _short(exc)}",
                            "stop the containers using it") from None


def _stream(chunks, on_line: Callable[[str], None]) -> None:
    """Split a byte stream into lines for on_line."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            on_line(line.decode(errors="replace"))
    if buffer:
        on_line(buffer.decode(errors="replace"))


def connect(timeout: int = 600) -> Engine:
    """The engine DOCKER_HOST (or the default socket) names; one clear error when none answers."""
    try:
        client = docker.from_env(version="auto", timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise UserError(f"cannot reach the Docker engine: {_short(exc)}", ENGINE_HINT) from None
    return Engine(client)
