"""Stand-in for actions/cache@v4's restore: `path` from $STANDIN_CACHE_STORE/<key>, else the newest
entry whose name starts with a restore-key (in order), as the real action chooses. Symlinks are kept."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def choose(store: Path, key: str, prefixes: list[str]) -> tuple[Path | None, bool]:
    if (store / key).is_dir():
        return store / key, True
    entries = [e for e in store.iterdir() if e.is_dir()] if store.is_dir() else []
    for prefix in prefixes:
        matching = sorted((e for e in entries if e.name.startswith(prefix)), key=lambda e: e.stat().st_mtime)
        if matching:
            return matching[-1], False
    return None, False


if __name__ == "__main__":
    prefixes = [k.strip() for k in os.environ.get("RESTORE_KEYS", "").splitlines() if k.strip()]
    entry, hit = choose(Path(os.environ["STANDIN_CACHE_STORE"]), os.environ["KEY"], prefixes)
    if entry is not None:
        shutil.copytree(entry, os.environ["CACHE_PATH"], symlinks=True, dirs_exist_ok=True)
    print(f"cache: {'restored ' + entry.name if entry else 'miss'} for key {os.environ['KEY']}")
    with open(os.environ["GITHUB_OUTPUT"], "a") as out:
        out.write(f"cache-hit={'true' if hit else 'false'}\n")
