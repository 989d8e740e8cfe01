"""The registry as the shared build cache: `--cache-to REPO` pushes, `--cache-from REPO` pulls.

Two images per workspace key (workspace_image.image_key), both moved by the engine
itself (its own registry configuration: certs.d, insecure registries; credentials as
for image.push, registry_auth.credentials), so a worker reaches the cache
wherever its engine runs:

- `REPO:ws-<key>`: the workspace image (the builder plus the vendored tree).
- `REPO:gocache-<key>`: the workspace image plus a snapshot of Go's build cache
  taken after a successful compile (a container copies the volume into its own
  file system and is committed, so the snapshot never passes through the caller).
  A worker whose Go build-cache volume does not exist yet seeds it from there.

A cache entry is used only when complete and the one asked for: the engine pulls a
manifest only once the registry has every blob (the registry refuses a manifest
whose blobs are missing, so a push cut short leaves no tag), checks each layer
against its digest, and the image must carry the full key in its label. Anything
else is a miss: the worker builds as if there were no cache, and says why.
"""

from __future__ import annotations

import re

from scheduler_build.build.workspace_image import KEY_LABEL, tag_for
from scheduler_build.engine import Engine, Volume
from scheduler_build.errors import UserError
from scheduler_build.progress import log
from scheduler_build.engine import credentials as registry_auth

SNAPSHOT = "/gocache-snapshot"
_REPO = re.compile(r"^[a-z0-9.-]+(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$")


def check_repo(repo: str, flag: str) -> str:
    """`host[:port]/path` (no tag: the cache adds its own), or one clear error naming the flag."""
    repo = (repo or "").strip()
    if repo and not _REPO.match(repo):
        raise UserError(f"{flag} {repo!r} is not a registry repository", "e.g. registry.example.com:5000/acme/sb-cache")
    return repo


def _auth(repo: str) -> dict | None:
    found = registry_auth.credentials(repo.split("/", 1)[0])
    return {"username": found[0], "password": found[1]} if found else None


def ref(repo: str, kind: str, key: str) -> str:
    return f"{repo}:{kind}-{key[:32]}"


def _pull_verified(engine: Engine, wanted: str, key: str) -> bool:
    ok, reason = engine.fetch_image(wanted, _auth(wanted))
    if not ok:
        log(f"    {wanted}: not taken from the registry cache ({reason})")
        return False
    image = engine.inspect_image(wanted)
    if image is None or image.labels.get(KEY_LABEL) != key:
        log(f"    {wanted}: not taken from the registry cache (its key label is not {key[:32]}...)")
        engine.remove_image(wanted)
        return False
    return True


def pull_workspace(engine: Engine, repo: str, key: str) -> bool:
    """Bring the workspace image of `key` from the cache and tag it locally; False on a miss."""
    wanted = ref(repo, "ws", key)
    if not _pull_verified(engine, wanted, key):
        return False
    engine.tag(wanted, tag_for(key))
    log(f"    workspace image from the registry cache: {wanted}")
    return True


def push_workspace(engine: Engine, repo: str, key: str) -> None:
    target = ref(repo, "ws", key)
    if engine.in_registry(target, _auth(target)):
        return
    engine.tag(tag_for(key), target)
    log(f"    pushed {target}@{engine.push(target, _auth(target))}")


def seed_gocache(engine: Engine, repo: str, key: str, volume: str) -> bool:
    """Fill a Go build-cache volume that does not exist yet from the cache's snapshot."""
    if engine.volume_size(volume) is not None:
        return False
    wanted = ref(repo, "gocache", key)
    if not _pull_verified(engine, wanted, key):
        return False
    code = engine.run(wanted, ["sh", "-c", f"cp -a {SNAPSHOT}/. /gocache/"], volumes=[Volume("/gocache", volume)],
                      environment={}, workdir="/", network="none", on_line=lambda line: None)
    engine.remove_image(wanted)
    if code != 0:
        raise UserError(f"seeding the Go build-cache volume {volume} from {wanted} failed (exit {code})",
                        f"remove the volume (`docker volume rm {volume}`) and build again")
    log(f"    Go build cache seeded from the registry cache: {wanted}")
    return True


def push_gocache(engine: Engine, repo: str, key: str, volume: str) -> None:
    """Snapshot the Go build-cache volume into `REPO:gocache-<key>` unless the registry has it."""
    target = ref(repo, "gocache", key)
    if engine.in_registry(target, _auth(target)):
        return
    with engine.container(tag_for(key), ["sh", "-c", f"mkdir -p {SNAPSHOT} && cp -a /gocache/. {SNAPSHOT}/"],
                          volumes=[Volume("/gocache", volume, read_only=True)], environment={}, workdir="/") as box:
        code = box.run(on_line=lambda line: None)
        if code != 0:
            raise UserError(f"the snapshot of the Go build-cache volume {volume} failed (exit {code})")
        box.commit(target)
    try:
        log(f"    pushed {target}@{engine.push(target, _auth(target))}")
    finally:
        engine.remove_image(target)
