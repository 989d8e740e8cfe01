"""What a node leaves on the machine outside its state directory, and how `down` removes it.

- cgroups: /sys/fs/cgroup/<hierarchy>/scheduler-build (the kubelet's cgroupRoot), created by `up`;
- paths the kubelet and CNI hard-code (OUTSIDE_PATHS): recorded before `up`, and only
  those that did not exist then are removed;
- mounts under the state directory (pod volumes, network namespaces, overlay rootfs);
- the machine-wide lock: one node cluster per machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from scheduler_build.errors import UserError

CGROUP_FS = Path("/sys/fs/cgroup")
LOCK = Path("/run/scheduler-build-node.lock")
OUTSIDE_PATHS = (
    "/var/lib/kubelet",  # device-plugins/: the kubelet ignores --root-dir for it
    "/var/log/containers",  # the kubelet's hard-coded log symlinks
    "/var/log/pods",
    "/var/lib/cni",  # libcni's result cache (containerd 1.6)
    "/run/containerd/fifo",
    "/run/containerd/runc",
    "/run/scheduler-build-node",  # the shims' sockets (cluster.containerd.SHIM_SOCKETS)
    "/usr/libexec/kubernetes",
)


def hierarchies(with_unified: bool = False) -> list[Path]:
    """The mounted cgroup v1 hierarchies; with_unified adds the hybrid v2 `unified` mount.

    `up` creates nothing under `unified`, but runc mirrors the pods' cgroups there in a
    hybrid layout (seen: unified/scheduler-build/kubepods/...), so `down` removes it too."""
    if not CGROUP_FS.is_dir():
        return []
    return sorted(p for p in CGROUP_FS.iterdir()
                  if p.is_dir() and not p.is_symlink() and (with_unified or p.name != "unified"))


def make_cgroups(name: str) -> None:
    for root in hierarchies():
        target = root / name
        target.mkdir(exist_ok=True)
        if root.name == "cpuset":
            for knob in ("cpuset.cpus", "cpuset.mems"):
                (target / knob).write_text((root / knob).read_text())


def remove_cgroups(name: str, attempts: int = 10, pause: float = 0.5) -> list[str]:
    """rmdir depth-first (cgroup directories hold only kernel files; rmtree would fail on them).

    A cgroup whose last process is still exiting answers EBUSY: try again a few times."""
    removed = []
    tops = [root / name for root in hierarchies(with_unified=True) if (root / name).is_dir()]
    for attempt in range(attempts):
        for top in tops:
            for dirpath, _dirs, _files in sorted(os.walk(top), key=lambda entry: -entry[0].count("/")):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass
        removed += [str(top) for top in tops if not top.exists()]
        tops = [top for top in tops if top.exists()]
        if not tops:
            break
        time.sleep(pause)
    return removed


def existing_outside() -> list[str]:
    return [p for p in OUTSIDE_PATHS if os.path.lexists(p)]


def remove_outside(existed_before: list[str]) -> list[str]:
    removed = []
    for path in OUTSIDE_PATHS:
        if path not in existed_before and os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def unmount_under(directory: Path) -> list[str]:
    """Lazily unmount every mount point under directory, deepest first."""
    prefix = str(directory.resolve()) + "/"
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(prefix):
            points.append(point)
    for point in sorted(set(points), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    return points


def acquire_lock(state_dir: Path, running) -> None:
    """Take the machine's node lock; a lock whose cluster no longer runs is taken over.

    `running(state_dir)` tells whether the holder's processes still run."""
    for _ in range(2):
        try:
            fd = os.open(LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = lock_holder()
            if holder and running(Path(holder)):
                raise UserError(f"a node cluster already runs on this machine (state {holder}); only one at a time",
                                f"stop it first: inv cluster.down --state-dir {holder}") from None
            LOCK.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as out:
            json.dump({"state_dir": str(state_dir), "pid": os.getpid()}, out)
        return
    raise UserError(f"cannot take the node lock {LOCK}", f"remove {LOCK} if no node cluster runs")


def lock_holder() -> str:
    try:
        return json.loads(LOCK.read_text()).get("state_dir", "")
    except (OSError, ValueError):
        return ""


def release_lock(state_dir: Path) -> None:
    if lock_holder() == str(state_dir):
        LOCK.unlink(missing_ok=True)
