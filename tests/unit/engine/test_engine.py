"""engine: an engine that is gone (killed mid-build, a remote host that went away) is one clear error from
every call, never a traceback. The engine here is a real docker SDK client aimed at a 127.0.0.1 port
nothing listens on: the connection is refused by the kernel, as after the remote-engine kill test's
`dockerd` died (its one traceback ended in exactly this `Connection refused`). No mock.

Every public method of Engine and Container has a case, so a new one without its guard fails here.
Negative control: before the guards, version, inspect_image, images, load, pull, remove_volume,
volume_size, remove_image and ensure_running raised requests' ConnectionError."""

from __future__ import annotations

import io
import socket
from pathlib import Path

import docker
import pytest

from scheduler_build.engine import Container, Engine, Volume
from scheduler_build.errors import UserError


@pytest.fixture(scope="module")
def gone() -> docker.DockerClient:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    return docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", version="1.41", timeout=5)


ENGINE_CALLS = {
    "version": lambda e: e.version(),
    "inspect_image": lambda e: e.inspect_image("x:y"),
    "images": lambda e: e.images(),
    "build": lambda e: e.build(io.BytesIO(b""), "x:y"),
    "container": lambda e: e.container("x:y", ["true"], environment={}, workdir="/").__enter__(),
    "run": lambda e: e.run("x:y", ["true"], environment={}, workdir="/"),
    "ensure_running": lambda e: e.ensure_running("x", "x:y", volumes=[Volume("/v", "v")], labels={}),
    "load": lambda e: e.load(io.BytesIO(b""), "x"),
    "pull": lambda e: e.pull("x:y"),
    "tag": lambda e: e.tag("x", "y:z"),
    "push": lambda e: e.push("x:y"),
    "fetch_image": lambda e: e.fetch_image("x:y"),
    "in_registry": lambda e: e.in_registry("x:y"),
    "remove_containers": lambda e: e.remove_containers({"a": "b"}),
    "containers_labelled": lambda e: e.containers_labelled("a"),
    "containers_created": lambda e: e.containers_created({"a": "b"}),
    "remove_container": lambda e: e.remove_container("x"),
    "remove_volume": lambda e: e.remove_volume("v"),
    "volume_size": lambda e: e.volume_size("v"),
    "remove_image": lambda e: e.remove_image("x:y"),
    "remove_unused_image": lambda e: e.remove_unused_image("x:y"),
    "images_labelled": lambda e: e.images_labelled("a"),
    "mounts_in_use": lambda e: e.mounts_in_use(),
}
# Calls whose answer already says "could not" (an optional pull, a best-effort removal): no error is right.
ANSWERS = {"pull": lambda r: r[0] is False, "fetch_image": lambda r: r[0] is False,
           "in_registry": lambda r: r is False, "remove": lambda r: r is None}

CONTAINER_CALLS = {
    "remove": lambda c, tmp: c.remove(),
    "put": lambda c, tmp: c.put("/", b""),
    "run": lambda c, tmp: c.run(),
    "exec": lambda c, tmp: c.exec(["true"], environment={}, workdir="/"),
    "processes": lambda c, tmp: c.processes(),
    "commit": lambda c, tmp: c.commit("x:y"),
    "stat": lambda c, tmp: c.stat("/x"),
    "fetch": lambda c, tmp: c.fetch("/x", tmp / "x"),
}


def _public(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items() if callable(value) and not name.startswith("_")}


def test_every_method_has_a_case():
    assert _public(Engine) == set(ENGINE_CALLS)
    assert _public(Container) == set(CONTAINER_CALLS)


@pytest.mark.parametrize("name", sorted(ENGINE_CALLS))
def test_a_lost_engine_is_one_clear_error_from_every_engine_call(gone, name):
    _answers_or_says_lost(name, lambda: ENGINE_CALLS[name](Engine(gone)))


@pytest.mark.parametrize("name", sorted(CONTAINER_CALLS))
def test_a_lost_engine_is_one_clear_error_from_every_container_call(gone, name, tmp_path: Path):
    _answers_or_says_lost(name, lambda: CONTAINER_CALLS[name](Container(gone, "0" * 64), tmp_path))


def _answers_or_says_lost(name: str, call) -> None:
    try:
        answer = call()
    except UserError as exc:
        assert "Docker engine" in str(exc) or "container" in str(exc), str(exc)
        return
    assert name in ANSWERS and ANSWERS[name](answer), f"{name} answered {answer!r} from an engine that is gone"


def _engine(base_url: str) -> Engine:
    return Engine(docker.DockerClient(base_url=base_url, version="1.41"))


def test_a_unix_socket_is_local_and_tcp_is_not():
    """Engine.local: which engines get the long-lived builder by default (build.reuse_builder auto). No engine
    is contacted: a client for a fixed API version only parses its address."""
    assert _engine("unix:///var/run/docker.sock").local
    assert _engine("unix:///tmp/dind/docker.sock").local
    assert not _engine("tcp://127.0.0.1:2375").local  # the remote-engine tier's engine
    assert not _engine("tcp://build-host.example:2376").local
