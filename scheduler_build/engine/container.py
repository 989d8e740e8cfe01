"""One container of the engine (engine.py): archives in and out, its command run or a command exec'd in it."""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Callable, Iterator

import docker
import docker.errors

from scheduler_build.engine import streams
from scheduler_build.engine.failures import ENGINE_HINT, LOST, short, talking
from scheduler_build.errors import UserError
from scheduler_build.progress import stream_line


class Container:
    """One container of the engine: archives in and out, its command run or a command exec'd in it."""

    def __init__(self, client: docker.DockerClient, container_id: str, labels: dict[str, str] | None = None):
        self._client = client
        self.id = container_id
        self.labels = labels or {}

    def remove(self) -> None:  # best effort: the engine may be gone
        with suppress(docker.errors.DockerException, *LOST):
            self._client.api.remove_container(self.id, force=True)

    def put(self, path: str, archive: bytes | IO[bytes]) -> None:
        """Unpack a tar archive at `path` (it must exist in the container or one of its volumes)."""
        with talking(f"copy inputs into container {self.id[:12]}"):
            self._client.api.put_archive(self.id, path, archive)

    def run(self, on_line: Callable[[str], None] = stream_line) -> int:
        """Start the container's command, stream its output; return the exit code."""
        api = self._client.api
        with talking(f"run container {self.id[:12]}"):
            api.start(self.id)
            streams.lines(api.logs(self.id, stream=True, follow=True, stdout=True, stderr=True), on_line)
            return int(api.wait(self.id).get("StatusCode", 1))

    def exec(self, command: list[str], *, environment: dict[str, str], workdir: str,
             on_line: Callable[[str], None] = stream_line) -> int:
        """Run `command` in this running container, stream its output; return the exit code."""
        api = self._client.api
        with talking(f"exec in container {self.id[:12]}"):
            created = api.exec_create(self.id, command, environment=environment, workdir=workdir)
            streams.lines(api.exec_start(created["Id"], stream=True), on_line)
            return int(api.exec_inspect(created["Id"]).get("ExitCode") or 0)

    def processes(self) -> int:
        """How many run in this container (the engine's `top`): its main process and what was exec'd in it,
        not the main process's own children (a long-lived builder's idle timer)."""
        with talking(f"list the processes of container {self.id[:12]}"):
            main = str((self._client.api.inspect_container(self.id).get("State") or {}).get("Pid") or "")
            top = self._client.api.top(self.id, ps_args="-o pid,ppid,args")
            titles = top.get("Titles") or []
            ppid = titles.index("PPID") if "PPID" in titles else None
            return sum(1 for row in top.get("Processes") or [] if ppid is None or str(row[ppid]) != main)

    def commit(self, ref: str) -> str:
        """Commit the container's file system (not its volumes) as image `ref`; returns its ID."""
        repo, _, tag = ref.rpartition(":")
        with talking(f"commit container {self.id[:12]}"):
            return self._client.api.commit(self.id, repository=repo, tag=tag)["Id"]

    def stat(self, path: str) -> dict | None:
        """The engine's stat of `path` in the container (name, size, mode, mtime), None when absent."""
        api = self._client.api
        with talking(f"read {path} in container {self.id[:12]}"):
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
            raise UserError(f"cannot copy {path} out of container {self.id[:12]}: {short(exc)}", ENGINE_HINT) from None
