"""What builders and image builds leave behind once nothing uses it, for `inv clean`.

- The /out directory of a long-lived builder that is gone (build/warm.py: `<cache>/builds/builders/<name>-<random>`;
  320 MB after a compile). The builder removes its own when it is replaced or stopped by us, but one that exited
  idle, a SIGTERM'd build's, or an engine restart's stays. Ours by our own state: the directory is in the caller's
  cache, named as warm.py names them; orphaned when no container mounts it. Removed under the builder's lock, so a
  build starting that builder meanwhile keeps it.
- A replaced image: a builder image `inv builder.bootstrap` built, or a workspace image built from this cache's
  vendored trees, whose tag a newer one of the same kind took (a forced bootstrap, a workspace rebuilt under its key).
  Ours by our labels (its kind's, and for a workspace image the vendored tree in this cache directory), never by a
  name; replaced when it has no tag and the tag its labels name is on another image with the same labels. One a
  container still uses (a builder running on it) is left and named. A replaced builder that a replaced workspace
  image was built on is not listed by the engine (a parent image); it goes with that image (the engine prunes
  an untagged parent).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from scheduler_build.build import workspace_image
from scheduler_build.build.builder_image import BOOTSTRAP_REPO, GO_VERSION_LABEL
from scheduler_build.engine import Engine, Image
from scheduler_build.filelock import try_turn

ORPHANED_OUT = "output directory of a builder that is gone"
REPLACED = "replaced by a newer"
# warm.container_name plus `-<random>`: the uid-scoped names, and the earlier ones without the uid.
_OUT_NAME = re.compile(r"^(scheduler-build-builder-(?:u\d+-)?[0-9a-f]{12})-[0-9a-f]{8}$")


def orphaned_outs(engine: Engine, state_dir: Path) -> list[tuple[Path, str]]:
    """(directory, builder name) of each builder /out directory in our state that no container mounts."""
    root = Path(state_dir).absolute() / "builders"
    if not root.is_dir():
        return []
    bound, _ = engine.mounts_in_use()
    found = []
    for entry in sorted(root.iterdir()):
        match = _OUT_NAME.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and str(entry) not in bound:
            found.append((entry, match.group(1)))
    return found


def remove_out(engine: Engine, directory: Path, state_dir: Path) -> bool:
    """Remove an orphaned /out directory unless its builder's lock is held (a build is starting that builder
    and may mount it) or a container mounts it by now; False: it was left."""
    name = _OUT_NAME.match(directory.name)
    assert name is not None, directory
    with try_turn(Path(state_dir) / f"{name.group(1)}.lock") as free:
        if not free or str(directory) in engine.mounts_in_use()[0]:
            return False
        shutil.rmtree(directory, ignore_errors=True)
    return True


def _successor_tag(image: Image, cache_dir: Path | None) -> str:
    """The tag this untagged image of ours was replaced under ("" when it is not one of ours)."""
    labels = image.labels or {}
    key, vendor_dir = labels.get(workspace_image.KEY_LABEL), labels.get(workspace_image.VENDOR_DIR_LABEL, "")
    if key:  # first: a workspace image inherits its builder's labels (FROM it), the Go version's among them
        root = str(Path(cache_dir).absolute()) + "/" if cache_dir is not None else ""
        return workspace_image.tag_for(key) if vendor_dir.startswith(root) else ""
    if labels.get(GO_VERSION_LABEL):
        return f"{BOOTSTRAP_REPO}:{labels[GO_VERSION_LABEL]}"
    return ""


_SAME_KIND = (GO_VERSION_LABEL, workspace_image.KEY_LABEL, workspace_image.VENDOR_DIR_LABEL)


def replaced_images(engine: Engine, cache_dir: Path | None) -> list[tuple[Image, str]]:
    """(image, the tag that replaced it) of each untagged builder or workspace image of ours whose tag a newer
    image of the same kind holds now."""
    found: dict[str, tuple[Image, str]] = {}
    for label in (GO_VERSION_LABEL, workspace_image.KEY_LABEL):
        for image in engine.images_labelled(label):
            if image.tags or image.id in found or not (tag := _successor_tag(image, cache_dir)):
                continue
            newer = engine.inspect_image(tag)
            if newer is not None and newer.id != image.id and newer.created >= image.created and all(
                    newer.labels.get(k) == image.labels.get(k) for k in _SAME_KIND):
                found[image.id] = (image, tag)
    # Newest first: an image built on another (a workspace image on its builder) goes before it.
    return sorted(found.values(), key=lambda pair: pair[0].created, reverse=True)


def remove_image(engine: Engine, image_id: str) -> bool:
    """Remove a replaced image by its ID unless a container uses it, or an image built on it (a workspace image
    of the builder it was) still stands (False: left)."""
    if image_id in engine.mounts_in_use()[1]:
        return False
    return engine.remove_unused_image(image_id)
