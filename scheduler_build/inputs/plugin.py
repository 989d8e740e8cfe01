"""The inputs of `plugin.retarget`: the module, the target release and the builder it compiles in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scheduler_build.errors import UserError
from scheduler_build import settings
from scheduler_build.inputs.common import cache_dir, option
from scheduler_build.retarget.run import RetargetRequest


def retarget_inputs(c: Any, *, path: str, k8s_version: str | None, write: bool = False, fix: bool = False,
                    allow_dirty: bool = False) -> RetargetRequest:
    if not path:
        raise UserError("--path is required", "name the plugin module's directory, e.g. --path plugins/underlay")
    return RetargetRequest(path=Path(path), k8s_version=option(c, "k8s.version", k8s_version), cache_dir=cache_dir(c),
                           write=write, fix=fix, allow_dirty=allow_dirty, builder_image=option(c, "builder.image") or "",
                           gocache_volume=settings.gocache_volume(option(c, "build.gocache_volume")))
