"""A second Docker engine of the tests' own, one that cannot see the caller's files.

`start()` runs `dockerd` in a private mount namespace (`unshare --mount`) in which the
checkout, the cache directory and /tmp are empty tmpfs mounts, with its own data root,
exec root, pidfile and cgroup parent under a fresh directory in /var/tmp, a bridge of its own, no
iptables rules, listening on tcp://127.0.0.1:<free port> only. It is the situation of a
remote engine (DOCKER_HOST=tcp://...), of docker-in-docker and of a CI step in a container
with the host's socket: a bind mount of a host path fails there. The engine starts with no
image; `load_image` copies one from the machine's engine through the API (save, then
load), never a pull.

`stop()` removes its containers, stops the daemon (and its containerd), kills whatever is
left in its cgroup, removes the cgroup directories and the whole directory, data root
included; `leftovers()` names anything that survived (processes, mounts, interfaces,
files), for the tests to assert on. The overlay mounts live only in the private namespace,
so they end with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import docker

START_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0


@dataclass
class RemoteEngine:
    root: Path
    port: int
    process: subprocess.Popen
    hidden: tuple[Path, ...]
    links_before: frozenset[str] = field(default_factory=frozenset)

    @property
    def host(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def bridge(self) -> str:
        # Its own bridge, made here and deleted by stop(): with --bridge=none, dockerd deletes the
        # host's docker0 at start-up (moby removeDefaultBridgeInterface), since it shares our netns.
        return f"sbre{self.port}"

    @property
    def cgroup_parent(self) -> str:
        return self.root.name

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a process that should use this engine (and nothing of the local one)."""
        env = dict(os.environ if base is None else base)
        for name in ("DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT"):
            env.pop(name, None)
        env["DOCKER_HOST"] = self.host
        return env

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.host, version="auto", timeout=600)

    def log(self) -> str:
        path = self.root / "dockerd.log"
        return path.read_text(errors="replace")[-4000:] if path.is_file() else ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def links() -> frozenset[str]:
    """The engine-made network interfaces present (bridges an engine creates: docker*, br-*)."""
    return frozenset(p.name for p in Path("/sys/class/net").iterdir() if p.name.startswith(("docker", "br-")))


def start(hidden: list[Path]) -> RemoteEngine:
    """A running engine on 127.0.0.1 that sees none of `hidden` (nor /tmp)."""
    if os.geteuid() != 0 or not shutil.which("dockerd") or not shutil.which("unshare"):
        raise RuntimeError("the remote-engine tier needs root, dockerd and unshare")
    root = Path(tempfile.mkdtemp(prefix="sb-remote-engine-", dir="/var/tmp"))
    paths = tuple(dict.fromkeys([Path("/tmp"), *(Path(p).resolve() for p in hidden)]))
    port = free_port()
    # A path under another hidden one (a checkout in /tmp, as CI may clone it) is hidden with it; once its
    # parent is an empty tmpfs it has no mount point left.
    outermost = [p for p in paths if p.is_dir() and not any(q != p and p.is_relative_to(q) for q in paths)]
    mounts = "".join(f"mount -t tmpfs -o size=4m,mode=0755 sb-hidden '{p}'; " for p in outermost)
    daemon = (f"exec dockerd --data-root {root}/data --exec-root {root}/exec --pidfile {root}/dockerd.pid "
              f"-H tcp://127.0.0.1:{port} --bridge=sbre{port} --iptables=false --ip6tables=false --ip-masq=false "
              f"--cgroup-parent=/{root.name} --storage-driver=overlay2 --log-level=warn")
    before = links()
    subprocess.run(["ip", "link", "add", f"sbre{port}", "type", "bridge"], check=True)
    log = open(root / "dockerd.log", "wb")
    process = subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-ec", mounts + daemon],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        env={"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "TMPDIR": str(root)},
    )
    log.close()
    engine = RemoteEngine(root=root, port=port, process=process, hidden=paths, links_before=before)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            docker.DockerClient(base_url=engine.host, version="auto", timeout=5).ping()
            return engine
        except Exception:
            if process.poll() is not None or time.monotonic() > deadline:
                text = engine.log()
                stop(engine)
                raise RuntimeError(f"the test engine did not start: {text}")
            time.sleep(0.5)


def load_image(engine: RemoteEngine, ref: str) -> None:
    """Copy `ref` from the machine's engine into the test engine through the API (same image ID)."""
    local = docker.from_env(version="auto", timeout=600)
    stream = local.api.get_image(ref)
    engine.client().api.load_image(stream)


def kill(engine: RemoteEngine) -> None:
    """The fault: the engine dies at once (SIGKILL to dockerd)."""
    if engine.process.poll() is None:
        engine.process.kill()
        engine.process.wait(timeout=STOP_TIMEOUT)


def _cgroup_pids(engine: RemoteEngine) -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            text = (proc / "cgroup").read_text() + (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if engine.root.name in text and int(proc.name) != os.getpid():
            found.add(int(proc.name))
    return found


def stop(engine: RemoteEngine) -> None:
    """Stop everything the engine ran and remove its directory (data root included)."""
    if engine.process.poll() is None:
        try:
            client = engine.client()
            for container in client.containers.list(all=True):
                container.remove(force=True)
        except Exception:
            pass
        engine.process.send_signal(signal.SIGTERM)
        try:
            engine.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            engine.process.kill()
            engine.process.wait(timeout=STOP_TIMEOUT)
    for _ in range(20):
        pids = _cgroup_pids(engine)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.25)
    for directory in sorted(Path("/sys/fs/cgroup").glob(f"*/{engine.root.name}/**/"), key=lambda p: -len(p.parts)):
        try:
            directory.rmdir()
        except OSError:
            pass
    shutil.rmtree(engine.root, ignore_errors=True)
    if Path("/sys/class/net", engine.bridge).exists():
        subprocess.run(["ip", "link", "del", engine.bridge], check=False)


def leftovers(engine: RemoteEngine) -> list[str]:
    """What survived stop(): processes, mounts, cgroups, interfaces or files of this engine."""
    found = [f"process {pid}" for pid in _cgroup_pids(engine)]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [f"mount {line.split()[4]}" for line in mounts.splitlines() if engine.root.name in line]
    found += [f"cgroup {p}" for p in Path("/sys/fs/cgroup").glob(f"*/{engine.root.name}")]
    found += [f"interface {name}" for name in sorted(links() - engine.links_before)]
    found += [f"interface {name} was removed" for name in sorted(engine.links_before - links())]
    found += [f"interface {engine.bridge}"] if Path("/sys/class/net", engine.bridge).exists() else []
    if engine.root.exists():
        found.append(f"directory {engine.root}")
    return found
