"""The container engine: the one edge every stage reaches Docker through.

A small interface in the shape of repo2docker's ContainerEngine, plain data in and out (`Image`, `Volume`):
no stage touches the docker SDK's clients. The SDK reaches the engine with API-version negotiation.

The engine API is the only path into and out of a container: inputs go in as tar archives
(`Container.put`) or images built from a streamed context (`build`), outputs come out as archives
(`Container.fetch`), and the mounts are named volumes. The one exception is the long-lived builder's
output directory (build/warm.py), bind-mounted only once a probe proved that the engine sees the caller's
files, and never relied on before that: the same code serves a local engine, DOCKER_HOST=tcp:// (TLS
through DOCKER_TLS_VERIFY / DOCKER_CERT_PATH), ssh:// and a docker-in-docker socket (docs/remote-engine.md).
"""

from __future__ import annotations

import os
import re
import socket
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import docker
import docker.errors
import docker.types

from scheduler_build.engine.container import Container
from scheduler_build.engine.failures import ENGINE_HINT, LOST, short, talking
from scheduler_build.errors import UserError
from scheduler_build.progress import stream_line

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Image:
    """What the stages read of a local image."""

    id: str
    tags: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    env: tuple[str, ...] = ()
    size: int = 0  # bytes, as the engine reports it
    created: str = ""  # the engine's creation time (RFC 3339: sorts as text)

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


def _image(sdk_image: Any) -> Image:
    config = sdk_image.attrs.get("Config") or {}
    return Image(id=sdk_image.id, tags=tuple(sdk_image.tags or ()), labels=dict(config.get("Labels") or {}),
                 env=tuple(config.get("Env") or ()), size=int(sdk_image.attrs.get("Size") or 0),
                 created=str(sdk_image.attrs.get("Created") or ""))


class Engine:
    """The Docker engine behind the small interface above."""

    def __init__(self, client: docker.DockerClient):
        self._client = client

    def version(self) -> dict:
        with talking("read its version"):
            return self._client.version()

    def inspect_image(self, ref: str) -> Image | None:
        """The local image `ref`, or None when the engine has no such image."""
        with talking(f"inspect image {ref}"):
            try:
                return _image(self._client.images.get(ref))
            except docker.errors.ImageNotFound:
                return None

    def images(self, repository: str | None = None) -> list[Image]:
        with talking("list images"):
            return [_image(i) for i in self._client.images.list(name=repository)]

    def images_labelled(self, key: str) -> list[Image]:
        """Every image carrying label `key`, untagged ones (a tag moved to a newer image) included."""
        with talking(f"list images labelled {key}"):
            return [_image(i) for i in self._client.images.list(filters={"label": key})]

    def mounts_in_use(self) -> tuple[set[str], set[str]]:
        """(host directories bind-mounted, image IDs used) by any container, running or not."""
        with talking("list containers"):
            found = self._client.containers.list(all=True, ignore_removed=True)  # one removed meanwhile: not in use
            binds = {m.get("Source", "") for c in found for m in (c.attrs.get("Mounts") or []) if m.get("Type") == "bind"}
            return binds, {c.attrs.get("Image", "") for c in found}

    def build(self, context: Path | IO[bytes], tag: str, dockerfile: str = "Dockerfile",
              labels: dict[str, str] | None = None, buildargs: dict[str, str] | None = None,
              platform: str | None = None, on_line: Callable[[str], None] = stream_line) -> str:
        """Build `context` (a directory, or a tar stream of one, streamed to the engine wherever it runs) into
        `tag` with no network; returns the image ID. Build errors come in the stream, so every chunk is checked."""
        image_id = ""
        where = {"path": str(context)} if isinstance(context, Path) else {"fileobj": context, "custom_context": True}
        with talking(f"build {tag}"):
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
        with talking(f"create a container from {image}"):
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
                       network: str = "none", bind: tuple[Path, str] | None = None, command: list[str] = (),
                       known_binds: tuple[Path, ...] = (),
                       same_command: Callable[[list[str]], bool] | None = None) -> "Container":
        """The running container `name` running `command` in `image`, created or started if need be, and
        removed by the engine when its command exits. `bind` (host directory, target) is tried on creation
        only; an engine that cannot see that directory creates the container without it (its caller probes
        before relying on it). A container of that name is used only when it is what this call would create
        (image, command, network, mounts: a bind only from `bind` or `known_binds`, the caller's own
        record; `same_command` judges its command, else it must equal `command`); any other is refused in one
        line, never run in."""
        command = list(command) or ["sleep", "infinity"]
        with talking(f"start {name}"):
            try:
                container = self._client.containers.get(name)
            except docker.errors.NotFound:
                container = self._create_idle(name, image, _mounts(volumes), labels, network, bind, command)
            self._check_alike(container, image, same_command or (lambda found: found == command), network, volumes,
                              {str(p) for p in (*known_binds, *([bind[0]] if bind else []))}, bind[1] if bind else "")
            if container.status != "running":
                try:
                    container.start()
                except docker.errors.NotFound:  # it exited (idle) and the engine removed it meanwhile
                    container = self._create_idle(name, image, _mounts(volumes), labels, network, bind, command)
                    container.start()
                except docker.errors.APIError:  # exited (idle) and being removed, or its bound directory is gone
                    self._remove_and_wait(name)
                    container = self._create_idle(name, image, _mounts(volumes), labels, network, bind, command)
                    container.start()
            return Container(self._client, container.id, dict(container.labels or {}))

    def _remove_and_wait(self, name: str, seconds: float = 30.0) -> None:
        """Remove container `name` (or let the engine finish removing it: an exited auto-remove one) and wait
        until the name is free."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._client.containers.get(name).remove(force=True)
            except docker.errors.NotFound:
                return
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: a removal is already in progress
                    raise
            time.sleep(0.2)
        raise UserError(f"the engine did not remove {name} within {seconds:.0f} s", f"remove it: docker rm -f {name}")

    def _check_alike(self, container: Any, image: str, same_command: Callable[[list[str]], bool], network: str,
                     volumes: list[Volume],
                     binds: set[str], bind_target: str) -> None:
        """Refuse a container that is not what ensure_running would create (a look-alike under our name)."""
        attrs, host = container.attrs or {}, (container.attrs or {}).get("HostConfig") or {}
        wanted = {(v.target, v.name) for v in volumes}
        mounts = attrs.get("Mounts") or []
        found = {(m.get("Destination"), m.get("Name")) for m in mounts if m.get("Type") == "volume"}
        foreign = [m for m in mounts if m.get("Type") != "volume" and not (
            m.get("Type") == "bind" and m.get("Destination") == bind_target and m.get("Source") in binds)]
        expected_id = self._client.images.get(image).id
        why = ("another image" if attrs.get("Image") != expected_id else
               f"network {host.get('NetworkMode')!r}, not {network!r}" if host.get("NetworkMode") != network else
               "privileged" if host.get("Privileged") else
               "another command" if not same_command(list((attrs.get("Config") or {}).get("Cmd") or [])) else
               "other volumes" if found != wanted else
               f"a mount scheduler-build did not make ({foreign[0].get('Source') or foreign[0].get('Name')})" if foreign else "")
        if why:
            raise UserError(f"the engine already has a container named {container.name}, and it is not a builder "
                            f"scheduler-build would create ({why}); nothing was run in it",
                            f"if it is yours, remove it (`docker rm -f {container.name}`); if not, ask whoever "
                            "runs that engine, or use another cache directory or build.gocache_volume")

    def _create_idle(self, name: str, image: str, mounts: list[docker.types.Mount], labels: dict[str, str],
                     network: str, bind: tuple[Path, str] | None, command: list[str]) -> Any:
        binds = [docker.types.Mount(bind[1], str(bind[0]), type="bind")] if bind else []
        try:
            return self._client.containers.create(image, command=command, name=name, mounts=mounts + binds,
                                                  labels=labels, network_mode=network, detach=True, auto_remove=True)
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # another build created it first (checked by the caller as any other)
                return self._client.containers.get(name)
            if binds and exc.status_code in (400, 500):  # e.g. "bind source path does not exist" on its side
                return self._create_idle(name, image, mounts, labels, network, None, command)
            raise UserError(f"the Docker engine refused to create {name} from {image}: "
                            f"{exc.explanation or short(exc)}") from None

    def containers_created(self, labels: dict[str, str]) -> list[tuple[str, str]]:
        """(name, creation time) of the containers carrying all of `labels`, oldest first."""
        with talking("list containers"):
            found = self._client.containers.list(all=True, filters={"label": [f"{k}={v}" for k, v in labels.items()]})
            return sorted(((c.name, c.attrs.get("Created", "")) for c in found), key=lambda item: item[1])

    def remove_container(self, name: str) -> None:
        """Force-remove one container by name (gone already: nothing to do)."""
        with talking(f"remove {name}"):
            self._remove_and_wait(name)

    def load(self, archive: IO[bytes], what: str) -> set[str]:
        """`docker load` a Docker archive; returns the loaded image IDs."""
        with talking(f"load {what}"):
            try:
                return {image.id for image in self._client.images.load(archive)}
            except docker.errors.DockerException as exc:  # a lost engine is not one: _talking says so
                raise UserError(f"docker load of {what} failed: {short(exc)}") from None

    def pull(self, ref: str) -> tuple[bool, str]:
        """Try to pull `ref`; return (ok, reason). Never required: callers fall back."""
        repo, _, tag = ref.rpartition(":") if ":" in ref.split("/")[-1] else (ref, "", "latest")
        try:
            self._client.images.pull(repo, tag=tag)
            return True, ""
        except (docker.errors.DockerException, *LOST) as exc:
            return False, short(exc)

    def tag(self, image: str, ref: str) -> None:
        repo, _, tag = ref.rpartition(":")
        with talking(f"tag {image} as {ref}"):
            self._client.api.tag(image, repo, tag)

    def push(self, ref: str, auth: dict | None = None) -> str:
        """The engine pushes `ref` (its own registry config: certs.d, insecure registries); returns the digest."""
        repo, _, tag = ref.rpartition(":")
        digest = ""
        with talking(f"push {ref}"):
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
            return False, short(exc)

    def in_registry(self, ref: str, auth: dict | None = None) -> bool:
        """Whether the registry holds a complete manifest for `ref` (the engine asks it)."""
        try:
            self._client.api.inspect_distribution(ref, auth_config=auth)
            return True
        except (docker.errors.DockerException, *LOST):
            return False

    def remove_containers(self, labels: dict[str, str]) -> int:
        """Force-remove the containers carrying all of `labels` (ours only); returns how many."""
        with talking("remove containers labelled " + ",".join(f"{k}={v}" for k, v in labels.items())):
            found = self._client.containers.list(all=True, filters={"label": [f"{k}={v}" for k, v in labels.items()]})
            for container in found:
                container.remove(force=True)
        return len(found)

    def containers_labelled(self, key: str) -> list[tuple[str, str, dict[str, str]]]:
        """(name, value of label `key`, all its labels) of every container carrying that label."""
        with talking(f"list containers labelled {key}"):
            found = self._client.containers.list(all=True, filters={"label": [key]})
            return [(c.name, (c.labels or {}).get(key, ""), dict(c.labels or {})) for c in found]

    def remove_volume(self, name: str) -> bool:
        """Remove a named volume; False when there is none."""
        with talking(f"remove volume {name}"):
            try:
                self._client.volumes.get(name).remove(force=True)
                return True
            except docker.errors.NotFound:
                return False
            except docker.errors.APIError as exc:
                raise UserError(f"cannot remove volume {name}: {exc.explanation or short(exc)}",
                                "stop the containers using it (`docker ps -a --filter volume=" + name + "`)") from None

    def volume_size(self, name: str) -> int | None:
        """Bytes a named volume holds (the engine's disk-usage report), None when there is no such volume."""
        with talking("read its disk usage"):
            volumes = self._client.df().get("Volumes") or []
        return next((int((v.get("UsageData") or {}).get("Size") or 0) for v in volumes if v.get("Name") == name), None)

    def remove_unused_image(self, ref: str) -> bool:
        """Remove one local image that nothing uses: False (and nothing removed) when a container or another
        image (built on it) still does."""
        with talking(f"remove image {ref}"):
            try:
                self._client.images.remove(ref, noprune=False)
                return True
            except docker.errors.ImageNotFound:
                return True
            except docker.errors.APIError as exc:
                if exc.status_code == 409:  # conflict: a container or a dependent child image
                    return False
                raise UserError(f"cannot remove image {ref}: {exc.explanation or short(exc)}") from None

    def remove_image(self, ref: str) -> None:
        """Remove (untag) one local image reference."""
        with talking(f"remove image {ref}"):
            try:
                self._client.images.remove(ref)
            except docker.errors.ImageNotFound:
                pass
            except docker.errors.APIError as exc:
                raise UserError(f"cannot remove image {ref}: {exc.explanation or short(exc)}",
                                "stop the containers using it") from None


def _mounts(volumes: list[Volume]) -> list[docker.types.Mount]:
    return [docker.types.Mount(v.target, v.name, type="volume", read_only=v.read_only) for v in volumes]


def connect(timeout: int = 600) -> Engine:
    """The engine DOCKER_HOST (or the default socket) names; one clear error when none answers."""
    try:
        client = docker.from_env(version="auto", timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise UserError(f"cannot reach the Docker engine: {short(exc)}", ENGINE_HINT) from None
    return Engine(client)
