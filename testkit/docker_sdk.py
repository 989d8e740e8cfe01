"""The raw docker SDK client, for tests and benchmarks that witness what the engine holds.

Product code reaches the engine only through scheduler_build.engine; tests look at
the result independently of that interface.
"""

from __future__ import annotations

import docker


def client() -> docker.DockerClient:
    return docker.from_env(version="auto", timeout=600)
