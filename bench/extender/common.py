"""Shared pieces of the extender benchmarks: Go binaries, the API stub cluster,
processes on free ports, and the load generator."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from scheduler_build import settings
from scheduler_build.errors import UserError
from testkit import apistub
from testkit import samples
from scheduler_build.progress import log

HERE = Path(__file__).resolve().parent
GO_DIR = HERE / "go"


def go_binaries() -> dict[str, Path]:
    """Build loadgen and goextender with the host's Go, cached by source hash."""
    digest = hashlib.sha256()
    for path in sorted(GO_DIR.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(GO_DIR).as_posix().encode() + b"\0" + path.read_bytes())
    out = settings.cache_dir() / "bench-extender" / digest.hexdigest()[:16]
    bins = {name: out / name for name in ("loadgen", "goextender")}
    if all(p.exists() for p in bins.values()):
        return bins
    go = "/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else "go"
    tmp = Path(tempfile.mkdtemp(dir=out.parent if out.parent.exists() else None))
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod", GOPROXY="off")
    try:
        subprocess.run([go, "build", "-trimpath", "-o", str(tmp) + "/", "./..."], cwd=GO_DIR, env=env, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise UserError(f"building the Go benchmark programs in {GO_DIR} failed: {exc}",
                        "check that Go 1.26 is at /usr/local/go (inv doctor)") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists():
        os.replace(tmp, out)
    return bins


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise UserError(f"{url}/readyz did not become ready in {timeout:.0f}s", "see the server's stderr above")


@contextmanager
def cluster(nodes: int, capacity: int = 6) -> Iterator[apistub.ApiStub]:
    stub = apistub.ApiStub()
    node_objs, pod_objs = samples.cluster(nodes, pods_per_node=7, capacity=capacity)
    stub.load("nodes", node_objs)
    stub.load("pods", pod_objs)
    stub.start()
    stub.node_objs = node_objs  # type: ignore[attr-defined]
    try:
        yield stub
    finally:
        stub.stop()


@contextmanager
def process(args: list[str], url: str, env: dict | None = None) -> Iterator[str]:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, **(env or {})), text=True)
    try:
        try:
            wait_ready(url)
        except UserError:
            proc.kill()
            log((proc.stderr.read() if proc.stderr else "")[-2000:])
            raise
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def python_extender(kubeconfig: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "scheduler_build.extender", "--host", "127.0.0.1", "--port", str(port),
            "--kubeconfig", str(kubeconfig), "--log-level", "warning"]


def load(loadgen: Path, url: str, body: bytes, seconds: float, concurrency: int, expect: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as fh:
        fh.write(body)
        fh.flush()
        out = subprocess.run([str(loadgen), "-url", url, "-body", fh.name, "-c", str(concurrency),
                              "-d", f"{seconds}s", "-warmup", "0.5s", "-expect", expect],
                             capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    if result["errors"]:
        raise UserError(f"{url}: {result['errors']} of {result['requests']} requests failed: {result.get('first_error')}",
                        "the server under test answered wrongly")
    return result
