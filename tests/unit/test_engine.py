"""engine.Engine.local: which engines get the long-lived builder by default (build.reuse_builder auto).
No engine is contacted: a client for a fixed API version only parses its address."""

from __future__ import annotations

import docker

from scheduler_build.engine import Engine


def _engine(base_url: str) -> Engine:
    return Engine(docker.DockerClient(base_url=base_url, version="1.41"))


def test_a_unix_socket_is_local_and_tcp_is_not():
    assert _engine("unix:///var/run/docker.sock").local
    assert _engine("unix:///tmp/dind/docker.sock").local
    assert not _engine("tcp://127.0.0.1:2375").local  # the remote-engine tier's engine
    assert not _engine("tcp://build-host.example:2376").local
