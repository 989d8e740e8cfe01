"""clean: remove what scheduler-build created (dist outputs, caches, the Go build-cache volume,
bootstrapped builder images), never anything else; `--dry-run` lists each item and its size."""

from pathlib import Path

from invoke import task

from scheduler_build.clean import plan as clean_stage
from scheduler_build.engine import connect
from scheduler_build import settings
from scheduler_build.progress import log
from scheduler_build.commands._common import emit, flag_help, emit_json, option, user_errors


@task(auto_shortflags=False, help={
    "dist": flag_help("paths.dist_dir", before="published outputs under the dist directory, those carrying our build records "
                     "(the default when nothing is chosen); the directory: "),
    "cache": "the stages' caches under paths.cache_dir (module snapshots, vendor trees, rootfs, tools...)",
    "volume": flag_help("build.gocache_volume", after="; and containers of stopped runs"),
    "images": "builder images scheduler-build/golang:* that builder.bootstrap built, and the workspace images "
              "of this cache directory",
    "all": "all of the above",
    "dry-run": "list what would be removed, with sizes; remove nothing",
    "json": "print the items as JSON",
})
@user_errors
def clean(c, dist=False, cache=False, volume=False, images=False, all=False, dry_run=False, json=False):
    """Remove what scheduler-build created (default: --dist); --dry-run shows each item and its size."""
    chosen = {"dist": dist or all, "cache": cache or all, "volume": volume or all, "images": images or all}
    if not any(chosen.values()):
        chosen["dist"] = True
    dist_dir = Path(option(c, "paths.dist_dir"))
    engine = connect(timeout=60) if chosen["volume"] or chosen["images"] else None
    items: list[clean_stage.Item] = []
    if chosen["dist"]:
        items += clean_stage.plan_dist(dist_dir)
    if chosen["cache"]:
        items += clean_stage.plan_cache(settings.cache_dir(c.config))
    if chosen["volume"]:
        items += clean_stage.plan_containers(engine)  # first: a stopped run's container holds the volume
        items += clean_stage.plan_volume(engine, settings.gocache_volume(option(c, "build.gocache_volume")),
                                         settings.cache_dir(c.config) / "builds")
    if chosen["images"]:
        items += clean_stage.plan_images(engine, settings.cache_dir(c.config))
    busy: list[clean_stage.Item] = []
    if not dry_run:
        for item in items:
            if busy and item.kind == "volume" and item.what.endswith("volume"):
                busy.append(item)  # a busy builder uses it: the engine would refuse
                continue
            log(f"    remove {item.kind} {item.name}")
            if not clean_stage.remove(item, engine, dist_dir):
                busy.append(item)
        items = [item for item in items if item not in busy]
    if json:
        emit_json({"dry_run": bool(dry_run), "items": [item.to_dict() for item in items],
                   "bytes": sum(item.size for item in items)})
    else:
        emit(clean_stage.table(items, "would remove" if dry_run else "removed"))
    for item in busy:
        log(f"left {item.kind} {item.name}: in use by a build (its builder's lock is held); run clean again after it")
