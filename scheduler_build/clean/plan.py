"""`inv clean`: find and remove what scheduler-build created, and nothing else.

What counts as ours, per kind:

- dist: the files our records name (owned.published_files): a build's directory (its build-info.json
  names the binary and its SBOMs), an image layout (image-info.json, the layout's index and blobs),
  a rendering or chart (its `.scheduler-build.sha256` lists each file with the digest we wrote). A
  directory goes as a whole only when every file in it is ours; otherwise our files go, and the others
  (a user's notes beside a build) stay and are named. Also the staging directories
  (`.scheduler-build-staging-<name>-p<pid>-*`) of builds that are gone, and outputs of the earlier layout
  (a symlink `X` to a hidden `.X.<key>` directory). Anything else under dist/ stays.
- cache: the named sub-directories the stages keep under paths.cache_dir (the cache
  directory may be configured to a shared place, so nothing else in it is touched;
  `cluster/` holds a running control plane's state: `inv cluster.down` removes it).
- volume: the Go build-cache volume named by build.gocache_volume and its `-out` sibling,
  the long-lived builders that use it (build/warm.py), the caller's only and never one a build holds the lock
  of (named as left), the /out directories in our state of builders that are gone (clean/leftovers.py), and the
  containers our runs created (labelled with the run's host and pid) whose run is gone: a SIGKILL leaves one behind.
- images: `scheduler-build/golang:*` images that `inv builder.bootstrap` built (they
  carry its Go-version label); a pulled or hand-made image of that name stays; and
  the `scheduler-build/workspace:*` images (the vendored trees, build/workspace_image.py)
  built from this cache directory: another checkout's, on a shared engine, stay; and the untagged images of
  either kind a newer one replaced (clean/leftovers.py; one a container still uses is left and named).

Planning is pure file-system and engine reads; removal takes the planned items.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

from scheduler_build.build.builder_image import BOOTSTRAP_REPO, GO_VERSION_LABEL
from scheduler_build.build import warm
from scheduler_build.clean import leftovers
from scheduler_build.build.compile import out_volume
from scheduler_build import owned
from scheduler_build.atomic import STAGING
from scheduler_build.build.workspace_image import KEY_LABEL as WORKSPACE_KEY_LABEL, REPO as WORKSPACE_REPO
from scheduler_build.build.workspace_image import VENDOR_DIR_LABEL
from scheduler_build.engine import RUN_LABEL, Engine
from scheduler_build.errors import UserError

KINDS = ("dist", "cache", "volume", "images")
MARKERS = ("build-info.json", "kustomization.yaml", "image-info.json")
MAX_DEPTH = 6  # dist/<name>/<version>/<os>-<arch>: outputs sit 2-3 levels down

# Cache sub-directories and what each holds (all re-created on demand, some slowly).
CACHE_ENTRIES = {
    "goproxy": "module proxy answers (version lists, go.mod files)",
    "intree-plugins": "in-tree plugin names per Kubernetes version",
    "vocabulary": "configuration API fields per Kubernetes version",
    "src": "wrapper module sources",
    "tidy": "go mod tidy results",
    "vendor": "vendored module trees (GBs; slow to rebuild offline)",
    "patched": "patched module copies",
    "plugins": "plugin module snapshots",
    "plugin-modules": "plugin module downloads",
    "rootfs": "the extender image's Debian root file systems",
    "tools": "Go tools built from the module proxy (cosign, kubeconform, kube-score, the node's containerd and CoreDNS)",
    "k8s-schemas": "JSON schemas generated from a release's OpenAPI document (kubeconform)",
    "node": "the node's pause binary",
    "batching": "build's batching summary per configuration and what the verdict depends on (config/batching_key.py)",
    "debuggable": "the recorder patch of debuggable builds",
}


@dataclass(frozen=True)
class Item:
    kind: str  # one of KINDS
    name: str  # a path, a volume name or an image reference
    size: int  # bytes
    what: str  # why it is ours / what it holds
    paths: tuple[str, ...] = ()  # dist: every path the item removes
    left: tuple[str, ...] = ()  # dist: the files in it that are not ours, which stay

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("paths")
        data["left"] = list(self.left)
        return data


def tree_size(path: Path) -> int:
    """Bytes under `path` (files' sizes, links not followed)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size if os.path.lexists(path) else 0
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _published(link: Path) -> Path | None:
    """The `.X.<key>` directory a publish_dir symlink `X` (the earlier layout) points at, when it holds one of our records."""
    target = os.readlink(link)
    if "/" in target or not target.startswith(f".{link.name}."):
        return None
    resolved = link.parent / target
    if resolved.is_dir() and not resolved.is_symlink() and any((resolved / m).is_file() for m in MARKERS):
        return resolved
    return None


def plan_dist(dist_dir: Path) -> list[Item]:
    """Every output of ours under dist_dir (symlinks not followed): published outputs and directories
    holding our record, and staging directories of builds that are gone. Of a directory that also holds
    files our record does not name, only our files are planned; the others are named in `left`."""
    dist_dir = Path(dist_dir)
    items: list[Item] = []
    if not dist_dir.is_dir():
        return items
    pending = [(dist_dir, 0)]
    while pending:
        directory, depth = pending.pop()
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink():
                target = _published(entry)
                if target is not None:
                    items.append(_dist_item(entry, target))
            elif entry.is_dir() and _stopped_staging(entry):
                items.append(Item("dist", str(entry), tree_size(entry), "staging of a stopped build", (str(entry),)))
            elif entry.is_dir() and not entry.name.startswith(".") and (found := owned.published_files(entry)):
                items.append(_output_item(entry, *found))
            elif entry.is_dir() and not entry.name.startswith(".") and depth < MAX_DEPTH:
                pending.append((entry, depth + 1))
    return sorted(items, key=lambda item: item.name)


def _output_item(directory: Path, what: str, ours: list[str], theirs: list[str], keep: tuple[str, ...] = ()) -> Item:
    """The whole directory when every file in it is ours; else our files only, the others named as left."""
    if not theirs:
        paths = (directory, *map(Path, keep))
        return Item("dist", str(directory), sum(tree_size(p) for p in paths), what, tuple(map(str, paths)))
    return Item("dist", str(directory), sum(tree_size(directory / name) for name in ours),
                f"{what}; only its files of ours", tuple(str(directory / name) for name in ours),
                tuple(str(directory / name) for name in theirs))


# A staging directory: atomic.STAGING, the output's name, the pid of its run and mkdtemp's 8 characters
# (the pid tells a stopped build's from a running one's). Older builds named theirs `.tmp-<name>-p<pid>-`,
# and before that `.tmp-<name>-<8>` without a pid: such a name is anyone's, so one is ours only
# when every file in it is (owned.published_files).
_STAGING = re.compile(r"^(?:" + re.escape(STAGING) + r".+|\.tmp-[a-z0-9]+(?:-[a-z0-9]+)*)-p(\d+)-[A-Za-z0-9_]{8}$")
_PIDLESS = re.compile(r"^\.tmp-[a-z0-9]+(?:-[a-z0-9]+)*-[A-Za-z0-9_]{8}$")


def _stopped_staging(directory: Path) -> bool:
    """Whether `directory` is the staging directory of a run that is gone (a pid of this host)."""
    match = _STAGING.match(directory.name)
    if match:
        return not _alive(int(match.group(1)))
    if _PIDLESS.match(directory.name):
        found = owned.published_files(directory)
        return bool(found) and not found[2]
    return False


def _dist_item(link: Path, target: Path) -> Item:
    """An output of the earlier layout: the link, its hidden `.X.<key>` directories (only our files of
    one that holds others', and then the link stays)."""
    found = owned.published_files(target)
    if found and found[2]:
        return _output_item(target, *found)
    siblings = [p for p in link.parent.glob(f".{link.name}.*") if p.is_dir() and not p.is_symlink()
                and _LEGACY_KEY.match(p.name[len(link.name) + 2:])]
    paths = [link, *sorted(set(siblings) | {target})]
    marker = next(m for m in MARKERS if (target / m).is_file())
    return Item("dist", str(link), sum(tree_size(p) for p in paths[1:]), f"published output ({marker})",
                tuple(str(p) for p in paths))


_LEGACY_KEY = re.compile(r"^[0-9a-f]{16}$")


def plan_cache(cache_dir: Path) -> list[Item]:
    """The cache sub-directories of ours that exist (never the cache directory itself)."""
    cache_dir = Path(cache_dir)
    return [Item("cache", str(cache_dir / name), tree_size(cache_dir / name), what)
            for name, what in CACHE_ENTRIES.items()
            if (cache_dir / name).is_dir() and not (cache_dir / name).is_symlink()]


def plan_volume(engine: Engine, name: str, state_dir: Path | None = None) -> list[Item]:
    """The Go build-cache volume and its compile-output sibling (build/compile.py), after the caller's
    long-lived builders that use it (build/warm.py; a volume in use cannot be removed). Another user's
    builders on the same engine are not listed; `state_dir` holds the builders' locks and /out directories."""
    uid = str(os.getuid())
    state = str(state_dir or "")
    items = [Item("volume", builder, 0, "long-lived builder container", (state,))
             for builder, volume, labels in engine.containers_labelled(warm.VOLUME_LABEL)
             if volume == name and labels.get(warm.LABEL) == "1" and labels.get(warm.OWNER_LABEL) == uid] if name else []
    if state_dir is not None:  # after the builders: stopping one removes its own /out
        items += [Item("volume", str(out), tree_size(out), leftovers.ORPHANED_OUT, (str(state_dir),))
                  for out, _ in leftovers.orphaned_outs(engine, state_dir)]
    for volume, what in ((name, "Go build cache volume"), (out_volume(name), "compile output volume")):
        size = engine.volume_size(volume) if name else None
        if size is not None:
            items.append(Item("volume", volume, size, what))
    return items


def plan_containers(engine: Engine) -> list[Item]:
    """Containers our runs created on this host whose run is gone (SIGKILL, a lost machine...)."""
    host = socket.gethostname() + "/"
    items = []
    for name, owner, _ in engine.containers_labelled(RUN_LABEL):
        pid = owner[len(host):] if owner.startswith(host) else ""
        if pid.isdigit() and not _alive(int(pid)):
            items.append(Item("volume", name, 0, f"container of a stopped run (pid {pid})", (owner,)))
    return items


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def plan_images(engine: Engine, cache_dir: Path | None = None) -> list[Item]:
    """Bootstrapped builder images: scheduler-build/golang:* with the bootstrap's Go-version label; and the
    workspace images built from `cache_dir`'s vendored trees (every labelled one when it is None)."""
    items = []
    for image in engine.images(BOOTSTRAP_REPO):
        if not image.labels.get(GO_VERSION_LABEL):
            continue  # same name, not built by `inv builder.bootstrap`
        for tag in image.tags:
            if tag.startswith(BOOTSTRAP_REPO + ":"):
                items.append(Item("images", tag, image.size, f"bootstrapped builder (go {image.labels[GO_VERSION_LABEL]})"))
    root = str(Path(cache_dir).absolute()) + os.sep if cache_dir is not None else ""
    for image in engine.images(WORKSPACE_REPO):
        if image.labels.get(WORKSPACE_KEY_LABEL) and image.labels.get(VENDOR_DIR_LABEL, "").startswith(root):
            items += [Item("images", tag, image.size, "workspace image (vendored tree)")
                      for tag in image.tags if tag.startswith(WORKSPACE_REPO + ":")]
    items = sorted(items, key=lambda item: item.name)
    return items + [Item("images", image.id, image.size, f"{_KIND[tag.startswith(BOOTSTRAP_REPO)]} {leftovers.REPLACED} "
                         f"one under {tag}") for image, tag in leftovers.replaced_images(engine, cache_dir)]


_KIND = {True: "bootstrapped builder", False: "workspace image"}


def remove(item: Item, engine: Engine | None = None, dist_dir: Path | None = None) -> bool:
    """Remove one planned item; dist parents left empty by it go too (up to dist_dir). False: it was left
    (a builder a build is compiling in)."""
    try:
        return _remove(item, engine, dist_dir) is not False
    except OSError as exc:
        raise UserError(f"cannot remove {item.name}: {exc.strerror or exc}",
                        "fix its permissions (was it written by another user, e.g. root in a container?) "
                        "and run clean again; what was removed before stays removed") from None


def _remove(item: Item, engine: Engine | None, dist_dir: Path | None) -> bool | None:
    if item.kind == "dist":
        for path in map(Path, item.paths):
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
            if item.left:  # sub-directories (an image layout's blobs/) emptied inside a directory that stays
                _prune_empty(path.parent, Path(item.name))
        if dist_dir is not None:
            _prune_empty(Path(item.name).parent, Path(dist_dir))
    elif item.kind == "cache":
        shutil.rmtree(item.name)
    elif item.kind == "volume" and item.what == "long-lived builder container":
        assert engine is not None
        return warm.stop_one(engine, item.name, Path(item.paths[0]))  # never under a build's compile
    elif item.kind == "volume" and item.what == leftovers.ORPHANED_OUT:
        assert engine is not None
        return leftovers.remove_out(engine, Path(item.name), Path(item.paths[0]))
    elif item.kind == "volume" and item.what.startswith("container"):
        assert engine is not None
        engine.remove_containers({RUN_LABEL: item.paths[0]})
    elif item.kind == "volume":
        assert engine is not None
        engine.remove_volume(item.name)
    elif item.kind == "images" and leftovers.REPLACED in item.what:
        assert engine is not None
        return leftovers.remove_image(engine, item.name)  # not under a container that still runs on it
    elif item.kind == "images":
        assert engine is not None
        engine.remove_image(item.name)


def left_reason(item: Item) -> str:
    """Why `remove` left an item (it returned False)."""
    if item.kind == "images":
        return "a container, or an image built on it, still uses it"
    if item.what == leftovers.ORPHANED_OUT:
        return "a build is starting its builder (the builder's lock is held)"
    return "in use by a build (its builder's lock is held)"


def _prune_empty(directory: Path, stop: Path) -> None:
    directory, stop = directory.absolute(), stop.absolute()
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()  # only an empty directory
        except OSError:
            return
        directory = directory.parent


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human(size: int) -> str:
    value = float(size)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def table(items: list[Item], verb: str) -> str:
    """One line per item (`would remove` / `removed`), then the total."""
    lines = []
    for item in items:
        lines.append(f"{verb} {human(item.size):>10}  {item.kind:<7} {item.name}  ({item.what})")
        lines += [f"{'left':>{len(verb) + 11}}  {item.kind:<7} {path}  (not written by scheduler-build)"
                  for path in item.left]
    lines.append(f"{len(items)} item{'s' if len(items) != 1 else ''}, {human(sum(i.size for i in items))}"
                 if items else "nothing to remove")
    return "\n".join(lines)

