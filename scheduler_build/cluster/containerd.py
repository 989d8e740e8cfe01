"""The node's container runtime: containerd 2 on its own socket, the CNI bridge, the pause image.

containerd, its runc shim and `ctr` are built once from the Go module proxy at the
pinned VERSION (static: CGO off, upstream's `make STATIC=1` tags) and cached per
key through gotool.installed_programs; runc is Debian's (docs/cluster.md says why).
containerd 2 answers the CRI RuntimeConfig call, which the kubelet's cgroup-driver
fallback removal needs (KEP-4033); Debian's containerd 1.6 does not.
Everything lives under <state>/node/containerd (root, state, socket, runc root,
CNI config and IPAM data, bin/ naming the runtime's binaries); the Docker engine's
containerd is never touched. The pause image is compiled here from
templates/node/pause.go.j2 with the host Go and imported as a one-layer OCI
archive: nothing is ever pulled. `ctr` talks to the socket; there is no crictl
on this machine kind.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Mapping

from scheduler_build import templating
from scheduler_build.golang import gotool
from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import network
from scheduler_build.cluster.processes import ProcessRecord, spawn
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.progress import log

MODULE = "github.com/containerd/containerd/v2"
VERSION = "v2.4.2"
# Upstream's static release build (Makefile, STATIC=1) with CGO off: btrfs is cgo-only,
# devmapper and zfs are not used here; the version is stamped as `make` stamps it.
TAGS = ("urfave_cli_no_docs", "no_btrfs", "no_devmapper", "no_zfs", "osusergo", "netgo", "static_build")
LDFLAGS = f"-s -w -X {MODULE}/version.Version={VERSION} -X {MODULE}/version.Package={MODULE}"
PROGRAMS = ("containerd", "containerd-shim-runc-v2", "ctr")
RUNC = "/usr/sbin/runc"  # Debian's (docs/cluster.md: why it is not built here)
RUNC_TESTED = "1.5.2"  # the runc containerd VERSION is tested with (its script/setup/runc-version)
# The shims' sockets: containerd's default, /run/containerd/s, is shared with every other containerd
# on the machine (Docker's), and a shim killed at teardown leaves its socket there. A directory of
# the node's own (one node per machine: the lock), at most 42 characters (containerd's limit),
# removed by `down` (hosttraces.OUTSIDE_PATHS).
SHIM_SOCKETS = "/run/scheduler-build-node/s"
CNI_BIN = "/usr/lib/cni"
PAUSE_IMAGE = "localhost/scheduler-build/pause:local"
NAMESPACE = "k8s.io"  # the CRI plugin's containerd namespace


def socket(directory: Path) -> Path:
    return directory / "containerd.sock"


def build(cache_dir: Path, cached_only: bool = False) -> dict[str, Path]:
    """containerd, containerd-shim-runc-v2 and ctr at VERSION, built once per key and cached;
    cached_only: {} when they are not built yet (doctor builds nothing)."""
    built = gotool.installed_programs(cache_dir, "containerd", VERSION, [f"{MODULE}/cmd/{p}" for p in PROGRAMS],
                                      tags=TAGS, ldflags=LDFLAGS, cached_only=cached_only)
    return dict(zip(PROGRAMS, built))


def binary(directory: Path, program: str) -> Path:
    """One of the runtime's programs as the node runs it: <containerd dir>/bin/<program>."""
    return directory / "bin" / program


def cni_conflist() -> dict:
    """A bridge with host-local IPAM, portmap, and the firewall plugin (Docker's FORWARD policy is DROP)."""
    return {
        "cniVersion": "0.4.0",
        "name": "scheduler-build",
        "plugins": [
            {"type": "bridge", "bridge": network.BRIDGE, "isGateway": True, "ipMasq": True, "hairpinMode": True,
             "ipam": {"type": "host-local", "dataDir": "IPAM_DIR",
                      "ranges": [[{"subnet": network.POD_CIDR, "gateway": network.POD_GATEWAY}]],
                      "routes": [{"dst": "0.0.0.0/0"}]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
            {"type": "firewall", "backend": "iptables"},
        ],
    }


def write_config(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    conflist = cni_conflist()
    conflist["plugins"][0]["ipam"]["dataDir"] = str(directory / "cni" / "ipam")
    write_atomic(directory / "cni" / "net.d" / "10-scheduler-build.conflist", json.dumps(conflist, indent=2) + "\n")
    config = templating.render("node/containerd.toml.j2", dir=str(directory), pause_image=PAUSE_IMAGE,
                               runc=RUNC, shim=str(binary(directory, "containerd-shim-runc-v2")), cni_bin=CNI_BIN,
                               shim_sockets=SHIM_SOCKETS)
    path = directory / "containerd.toml"
    write_atomic(path, config)
    return path


def start(directory: Path, logs: Path, programs: Mapping[str, str | Path]) -> ProcessRecord:
    """containerd with the built `programs` (see build), linked under <directory>/bin: the
    config names the shim there (runtime_path), never the one PATH would find."""
    for path in (RUNC, f"{CNI_BIN}/bridge"):
        if not os.access(path, os.X_OK):
            raise UserError(f"{path} is missing", "apt-get install -y runc containernetworking-plugins")
    (directory / "bin").mkdir(parents=True, exist_ok=True)
    for program in PROGRAMS:
        link = binary(directory, program)
        link.unlink(missing_ok=True)
        link.symlink_to(Path(programs[program]).resolve())
    config = write_config(directory)
    return spawn("containerd", [str(binary(directory, "containerd")), "--config", str(config)], logs / "containerd.log")


def ctr_argv(directory: Path, *args: str) -> list[str]:
    return [str(binary(directory, "ctr")), "--address", str(socket(directory)), "-n", NAMESPACE, *args]


def ctr(directory: Path, *args: str, stdin=None, check: bool = True) -> str:
    argv = ctr_argv(directory, *args)
    out = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, timeout=600)
    if check and out.returncode != 0:
        raise UserError(f"`ctr {' '.join(args)}` failed: {out.stderr.strip().splitlines()[-1:] or ['no output']}",
                        "is the node's containerd running? `inv cluster.status`")
    return out.stdout


def pause_binary(cache_dir: Path) -> Path:
    """The pause binary, compiled once (static, stripped) with the host Go and cached."""
    source = templating.render("node/pause.go.j2")
    key = oci.digest_of(source.encode()).split(":")[1][:16]
    target = cache_dir / "node" / f"pause-{key}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pause-") as tmp:
        Path(tmp, "main.go").write_text(source)
        Path(tmp, "go.mod").write_text(templating.render("node/go.mod.j2"))
        out = Path(tmp) / "pause"
        gotool.check(["build", "-trimpath", "-ldflags", "-s -w", "-o", str(out), "."], cwd=tmp, what="building the pause binary",
                     env={"CGO_ENABLED": "0"})  # static; for this run only (the process environment is never changed)
        shutil.move(str(out), target)
    return target


def _tar_member(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    return info, io.BytesIO(data)


def oci_archive(binary: Path, name: str, out: Path, arch: str = "amd64") -> Path:
    """A one-layer OCI archive holding /pause, named `name` for `ctr images import`."""
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        layer.addfile(*_tar_member("pause", binary.read_bytes(), 0o755))
    layer_b = layer_buf.getvalue()
    config = {"architecture": arch, "os": "linux", "created": "1970-01-01T00:00:00Z",
              "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
              "rootfs": {"type": "layers", "diff_ids": [oci.digest_of(layer_b)]}}
    config_b = oci.canonical(config)
    manifest = {"schemaVersion": 2, "mediaType": oci.MANIFEST, "config": oci.descriptor(oci.CONFIG, config_b),
                "layers": [oci.descriptor("application/vnd.oci.image.layer.v1.tar", layer_b)]}
    manifest_b = oci.canonical(manifest)
    index = {"schemaVersion": 2, "manifests": [oci.descriptor(
        oci.MANIFEST, manifest_b, annotations={"io.containerd.image.name": name, oci.REF_NAME: name.rsplit(":", 1)[1]})]}
    with tarfile.open(out, "w") as archive:
        archive.addfile(*_tar_member("oci-layout", oci.LAYOUT_FILE.encode()))
        for blob in (layer_b, config_b, manifest_b):
            archive.addfile(*_tar_member("blobs/sha256/" + oci.digest_of(blob).split(":")[1], blob))
        archive.addfile(*_tar_member("index.json", json.dumps(index).encode()))
    return out


def import_pause(directory: Path, cache_dir: Path) -> None:
    archive = oci_archive(pause_binary(cache_dir), PAUSE_IMAGE, directory / "pause.oci.tar")
    with open(archive, "rb") as stdin:
        ctr(directory, "images", "import", "-", stdin=stdin)
    log(f"    pause image {PAUSE_IMAGE} imported (built locally)")


def kill_tasks(directory: Path) -> int:
    """Kill and delete every task and container left in the node's containerd (teardown)."""
    names = [line.split()[0] for line in ctr(directory, "tasks", "ls", check=False).splitlines()[1:] if line.split()]
    for name in names:
        ctr(directory, "tasks", "kill", "-s", "SIGKILL", name, check=False)
    for name in names:
        ctr(directory, "tasks", "delete", "-f", name, check=False)
    for line in ctr(directory, "containers", "ls", "-q", check=False).splitlines():
        if line.strip():
            ctr(directory, "containers", "delete", line.strip(), check=False)
    return len(names)
