"""The container engine: the one edge every stage reaches Docker through.

A small interface in the shape of repo2docker's ContainerEngine, plain data in and out (`Image`, `Volume`):
no stage touches the docker SDK's clients. The SDK reaches the engine with API-version negotiation.

The engine API is the only path into and out of a container: inputs go in as tar archives
(`Container.put`) or images built from a streamed context (`build`), outputs come out as archives
(`Container.fetch`), and the only mounts are named volumes. No host path is ever mounted, so the same
code serves a local engine, DOCKER_HOST=tcp:// (TLS through DOCKER_TLS_VERIFY / DOCKER_CERT_PATH),
ssh:// and a docker-in-docker socket (docs/remote-engine.md).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import socket
import tarfile
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import docker
import docker.errors
import docker.types
import requests
import urllib3.exceptions

from scheduler_build.errors import UserError
from scheduler_build.progress import stream_line
from scheduler_build import streams

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
class Volume:
    """A named engine volume at `target` (never a host path: the engine may not share the caller's files)."""

    target: str
    name: str
    read_only: bool = False


# On every container a run creates for itself: "<host>/<pid>" of that run. `clean` removes one whose run
# is gone (a SIGKILL leaves it behind), and never a container that is not ours.
RUN_LABEL = "io.scheduler-build.run"


def run_labels() -> dict[str, str]:
    return {RUN_LABEL: f"{socket.gethostname()}/{os.getpid()}"}


# What a connection to an engine that went away raises (the SDK's own errors aside).
LOST = (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError)


@contextmanager
def _talking(what: str) -> Iterator[None]:
    """One clear error when the engine is lost or refuses in the middle of `what`."""
    try:
        yield
    except docker.errors.APIError as exc:
        raise UserError(f"the Docker engine refused to {what}: {exc.explanation or _short(exc)}") from None
    except (docker.errors.DockerException, *LOST) as exc:
        raise UserError(f"lost the Docker engine while trying to {what}: {_short(exc)}", ENGINE_HINT) from None


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
        with _talking("read its version"):
            return self._client.version()

    def inspect_image(self, ref: str) -> Image | None:
        """The local image `ref`, or None when the engine has no such image."""
        with _talking(f"inspect image {ref}"):
            try:
                return _image(self._client.images.get(ref))
            except docker.errors.ImageNotFound:
                return None

    def images(self, repository: str | None = None) -> list[Image]:
        with _talking("list images"):
            return [_image(i) for i in self._client.images.list(name=repository)]

    def build(self, context: Path | IO[bytes], tag: str, dockerfile: str = "Dockerfile",
              labels: dict[str, str] | None = None, buildargs: dict[str, str] | None = None,
              platform: str | None = None, on_line: Callable[[str], None] = stream_line) -> str:
        """Build `context` (a directory, or a tar stream of one, streamed to the engine wherever it runs) into
        `tag` with no network; returns the image ID. Build errors come in the stream, so every chunk is checked."""
        image_id = ""
        where = {"path": str(context)} if isinstance(context, Path) else {"fileobj": context, "custom_context": True}
        with _talking(f"build {tag}"):
            stream = self._client.api.build(
                **where, dockerfile=dockerfile, tag=tag, labels=labels or {}, buildargs=buildargs or {},
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

    @contextmanager
    def container(self, image: str, command: list[str], *, volumes: list[Volume] = (), environment: dict[str, str],
                  workdir: str, network: str = "none", user: str | None = None, labels: dict[str, str] = {},
                  ) -> Iterator["Container"]:  # noqa: B006 - never mutated
        """A created (not started) container of `image`, removed on exit: put inputs, run, fetch outputs."""
        with _talking(f"create a container from {image}"):
            created = self._client.containers.create(
                image, command=command, mounts=_mounts(volumes), environment=environment, working_dir=workdir,
                network_mode=network, user=user, detach=True, labels={**labels, **run_labels()})
        try:
            yield Container(self._client, created.id)
        finally:
            try:
                created.remove(force=True)
            except (docker.errors.DockerException, *LOST):
                pass  # the engine went away: the error that ended the run says so

    def run(self, image: str, command: list[str], *, volumes: list[Volume] = (), environment: dict[str, str],
            workdir: str, network: str = "none", user: str | None = None,
            on_line: Callable[[str], None] = stream_line) -> int:
        """Run `command` in a fresh container, stream its output, remove it; return the exit code."""
        with self.container(image, command, volumes=volumes, environment=environment, workdir=workdir,
                            network=network, user=user) as box:
            return box.run(on_line)

    @property
    def local(self) -> bool:  # a unix socket (docker-py: http+docker://localhost); tcp://, ssh:// reach other hosts
        return self._client.api.base_url == "http+docker://localhost"

    def ensure_running(self, name: str, image: str, *, volumes: list[Volume], labels: dict[str, str],
                       network: str = "none") -> "Container":
        """The running container `name` (`sleep infinity` in `image`), created or started if need be."""
        with _talking(f"start {name}"):
            try:
                container = self._client.containers.get(name)
            except docker.errors.NotFound:
                try:
                    container = self._client.containers.create(image, command=["sleep", "infinity"], name=name,
                                                               mounts=_mounts(volumes), labels=labels,
                                                               network_mode=network, detach=True)
                except docker.errors.APIError as exc:
                    if exc.status_code != 409:  # 409: another build created it first
                        raise UserError(f"the Docker engine refused to create {name} from {image}: "
                                        f"{exc.explanation or _short(exc)}") from None
                    container = self._client.containers.get(name)
            if container.status != "running":
                container.start()
            return Container(self._client, container.id)

    def load(self, archive: IO[bytes], what: str) -> set[str]:
        """`docker load` a Docker archive; returns the loaded image IDs."""
        with _talking(f"load {what}"):
            try:
                return {image.id for image in self._client.images.load(archive)}
            except docker.errors.DockerException as exc:  # a lost engine is not one: _talking says so
                raise UserError(f"docker load of {what} failed: {_short(exc)}") from None

    def pull(self, ref: str) -> tuple[bool, str]:
        """Try to pull `ref`; return (ok, reason). Never required: callers fall back."""
        repo, _, tag = ref.rpartition(":") if ":" in ref.split("/")[-1] else (ref, "", "latest")
        try:
            self._client.images.pull(repo, tag=tag)
            return True, ""
        except (docker.errors.DockerException, *LOST) as exc:
            return False, _short(exc)

    def tag(self, image: str, ref: str) -> None:
        repo, _, tag = ref.rpartition(":")
        with _talking(f"tag {image} as {ref}"):
            self._client.api.tag(image, repo, tag)

    def push(self, ref: str, auth: dict | None = None) -> str:
        """The engine pushes `ref` (its own registry config: certs.d, insecure registries); returns the digest."""
        repo, _, tag = ref.rpartition(":")
        digest = ""
        with _talking(f"push {ref}"):
            for chunk in self._client.api.push(repo, tag=tag, auth_config=auth, stream=True, decode=True):
                if "error" in chunk or "errorDetail" in chunk:
                    detail = (chunk.get("errorDetail") or {}).get("message") or chunk.get("error")
                    raise UserError(f"the engine's push of {ref} failed: {detail}")
                digest = (chunk.get("aux") or {}).get("Digest", digest)
        return digest

    def fetch_image(self, ref: str, auth: dict | None = None) -> tuple[bool, str]:
        """The engine pulls `ref` (every layer checked against its digest); returns (ok, reason)."""
        repo, _, tag = ref.rpartition(":")
        try:
            for chunk in self._client.api.pull(repo, tag=tag, auth_config=auth, stream=True, decode=True):
                if "error" in chunk or "errorDetail" in chunk:
                    return False, (chunk.get("errorDetail") or {}).get("message") or chunk.get("error")
            return True, ""
        except (docker.errors.DockerException, *LOST) as exc:
            return False, _short(exc)

    def in_registry(self, ref: str, auth: dict | None = None) -> bool:
        """Whether the registry holds a complete manifest for `ref` (the engine asks it)."""
        try:
            self._client.api.inspect_distribution(ref, auth_config=auth)
            return True
        except (docker.errors.DockerException, *LOST):
            return False

    def remove_containers(self, labels: dict[str, str]) -> int:
        """Force-remove the containers carrying all of `labels` (ours only); returns how many."""
        with _talking("remove containers labelled " + ",".join(f"{k}={v}" for k, v in labels.items())):
            found = self._client.containers.list(all=True, filters={"label": [f"{k}={v}" for k, v in labels.items()]})
            for container in found:
                container.remove(force=True)
        return len(found)

    def containers_labelled(self, key: str) -> list[tuple[str, str, dict[str, str]]]:
        """(name, value of label `key`, all its labels) of every container carrying that label."""
        with _talking(f"list containers labelled {key}"):
            found = self._client.containers.list(all=True, filters={"label": [key]})
            return [(c.name, (c.labels or {}).get(key, ""), dict(c.labels or {})) for c in found]

    def remove_volume(self, name: str) -> bool:
        """Remove a named volume; False when there is none."""
        with _talking(f"remove volume {name}"):
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
        with _talking("read its disk usage"):
            volumes = self._client.df().get("Volumes") or []
        return next((int((v.get("UsageData") or {}).get("Size") or 0) for v in volumes if v.get("Name") == name), None)

    def remove_image(self, ref: str) -> None:
        """Remove (untag) one local image reference."""
        with _talking(f"remove image {ref}"):
            try:
                self._client.images.remove(ref)
            except docker.errors.ImageNotFound:
                pass
            except docker.errors.APIError as exc:
                raise UserError(f"cannot remove image {ref}: {exc.explanation or _short(exc)}",
                                "stop the containers using it") from None


def _mounts(volumes: list[Volume]) -> list[docker.types.Mount]:
    return [docker.types.Mount(v.target, v.name, type="volume", read_only=v.read_only) for v in volumes]


class Container:
    """One container of the engine: archives in and out, its command run or a command exec'd in it."""

    def __init__(self, client: docker.DockerClient, container_id: str):
        self._client = client
        self.id = container_id

    def remove(self) -> None:  # best effort: the engine may be gone
        with suppress(docker.errors.DockerException, *LOST):
            self._client.api.remove_container(self.id, force=True)

    def put(self, path: str, archive: bytes | IO[bytes]) -> None:
        """Unpack a tar archive at `path` (it must exist in the container or one of its volumes)."""
        with _talking(f"copy inputs into container {self.id[:12]}"):
            self._client.api.put_archive(self.id, path, archive)

    def run(self, on_line: Callable[[str], None] = stream_line) -> int:
        """Start the container's command, stream its output; return the exit code."""
        api = self._client.api
        with _talking(f"run container {self.id[:12]}"):
            api.start(self.id)
            streams.lines(api.logs(self.id, stream=True, follow=True, stdout=True, stderr=True), on_line)
            return int(api.wait(self.id).get("StatusCode", 1))

    def exec(self, command: list[str], *, environment: dict[str, str], workdir: str,
             on_line: Callable[[str], None] = stream_line) -> int:
        """Run `command` in this running container, stream its output; return the exit code."""
        api = self._client.api
        with _talking(f"exec in container {self.id[:12]}"):
            created = api.exec_create(self.id, command, environment=environment, workdir=workdir)
            streams.lines(api.exec_start(created["Id"], stream=True), on_line)
            return int(api.exec_inspect(created["Id"]).get("ExitCode") or 0)

    def processes(self) -> int:  # how many run in this container (the engine's `top`)
        with _talking(f"list the processes of container {self.id[:12]}"):
            return len(self._client.api.top(self.id).get("Processes") or [])

    def commit(self, ref: str) -> str:
        """Commit the container's file system (not its volumes) as image `ref`; returns its ID."""
        repo, _, tag = ref.rpartition(":")
        with _talking(f"commit container {self.id[:12]}"):
            return self._client.api.commit(self.id, repository=repo, tag=tag)["Id"]

    def stat(self, path: str) -> dict | None:
        """The engine's stat of `path` in the container (name, size, mode, mtime), None when absent."""
        api = self._client.api
        with _talking(f"read {path} in container {self.id[:12]}"):
            response = api.head(api._url("/containers/{0}/archive", self.id), params={"path": path})
            if response.status_code == 404:
                return None
            api._raise_for_status(response)
        header = response.headers.get("X-Docker-Container-Path-Stat")
        return json.loads(base64.b64decode(header)) if header else None

    @contextmanager
    def _archived(self, path: str) -> Iterator[tuple[tarfile.TarInfo, IO[bytes]] | None]:
        """The engine's archive of the regular file `path`: its header and a stream of its bytes, None
        when absent. Asked for uncompressed: the engine gzips it otherwise, 9x slower here."""
        api = self._client.api
        response = api._get(api._url("/containers/{0}/archive", self.id), params={"path": path}, stream=True,
                            headers={"Accept-Encoding": "identity"})
        try:  # closing the response drops the connection, so a half-read archive never blocks the next call
            if response.status_code == 404:
                yield None
                return
            api._raise_for_status(response)
            chunks = response.raw.stream(1 << 20, decode_content=True)
            with tarfile.open(fileobj=io.BufferedReader(streams.ChunkReader(chunks), 1 << 20), mode="r|") as archive:
                member = next(iter(archive), None)
                if member is None or not member.isfile():
                    raise UserError(f"{path} in container {self.id[:12]} is not a regular file")
                yield member, archive.extractfile(member)
        finally:
            response.close()

    def fetch(self, path: str, dest: Path, skip_if: Callable[[int, bytes], bool] | None = None,
              peek: int = 1 << 16) -> bool:
        """Copy the regular file `path` out of the container to `dest` (streamed, mode kept); returns
        whether it copied. With `skip_if`, it first gets the file's size and first `peek` bytes, and
        when it answers True the stream is closed and `dest` left as it is (one request either way)."""
        try:
            with self._archived(path) as found:
                if found is None:
                    raise UserError(f"no {path} in container {self.id[:12]}")
                member, source = found
                first = source.read(min(peek, member.size)) if skip_if else b""
                if skip_if and skip_if(member.size, first):
                    return False
                with open(dest, "wb") as out:
                    out.write(first)
                    while block := source.read(1 << 20):
                        out.write(block)
                os.chmod(dest, member.mode & 0o7777)
                return True
        except (docker.errors.DockerException, tarfile.TarError, *LOST) as exc:
            raise UserError(f"cannot copy {path} out of container {self.id[:12]}: {_short(exc)}", ENGINE_HINT) from None


def connect(timeout: int = 600) -> Engine:
    """The engine DOCKER_HOST (or the default socket) names; one clear error when none answers."""
    try:
        client = docker.from_env(version="auto", timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise UserError(f"cannot reach the Docker engine: {_short(exc)}", ENGINE_HINT) from None
    return Engine(client)
