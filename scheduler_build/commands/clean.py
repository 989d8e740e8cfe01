"""clean: remove what scheduler-build created (dist outputs, caches, the Go build-cache volume,
bootstrapped builder images), never anything else; `--dry-run` lists each item and its size."""

from invoke import task

from scheduler_build.clean import plan as clean_stage
from scheduler_build.engine import connect
from scheduler_build.inputs.clean import clean_inputs
from scheduler_build.progress import log
from scheduler_build.commands._common import emit, flag_help, emit_json, user_errors


@task(auto_shortflags=False, help={
    "dist": flag_help("paths.dist_dir", before="published outputs under the dist directory, those carrying our build records "
                     "(the default when nothing is chosen); the directory: "),
    "cache": "the stages' caches under paths.cache_dir (module snapshots, vendor trees, rootfs, tools...)",
    "volume": flag_help("build.gocache_volume", after="; your long-lived builders (not one a build is compiling in: "
                        "named as left), the output directories of builders that are gone, and containers of stopped runs"),
    "images": "builder images scheduler-build/golang:* that builder.bootstrap built, and the workspace images "
              "of this cache directory; and the untagged ones of either a newer image replaced",
    "all": "all of the above",
    "dry-run": "list what would be removed, with sizes; remove nothing",
    "json": "print the items as JSON",
})
@user_errors
def clean(c, dist=False, cache=False, volume=False, images=False, all=False, dry_run=False, json=False):
    """Remove what scheduler-build created (default: --dist); --dry-run shows each item and its size."""
    decided = clean_inputs(c, dist=dist, cache=cache, volume=volume, images=images, all=all, dry_run=dry_run)
    engine = connect(timeout=60) if decided.volume or decided.images else None
    items: list[clean_stage.Item] = []
    if decided.dist:
        items += clean_stage.plan_dist(decided.dist_dir)
    if decided.cache:
        items += clean_stage.plan_cache(decided.cache_dir)
    if decided.volume:
        items += clean_stage.plan_containers(engine)  # first: a stopped run's container holds the volume
        items += clean_stage.plan_volume(engine, decided.gocache_volume, decided.cache_dir / "builds")
    if decided.images:
        items += clean_stage.plan_images(engine, decided.cache_dir)
    busy: list[clean_stage.Item] = []
    if not decided.dry_run:
        for item in items:
            if item.kind == "volume" and item.what.endswith("volume") and any(
                    b.what == "long-lived builder container" for b in busy):
                busy.append(item)  # a busy builder uses it: the engine would refuse
                continue
            log(f"    remove {item.kind} {item.name}")
            if not clean_stage.remove(item, engine, decided.dist_dir):
                busy.append(item)
        items = [item for item in items if item not in busy]
    if json:
        emit_json({"dry_run": bool(dry_run), "items": [item.to_dict() for item in items],
                   "bytes": sum(item.size for item in items)})
    else:
        emit(clean_stage.table(items, "would remove" if dry_run else "removed"))
    for item in busy:
        log(f"left {item.kind} {item.name}: {clean_stage.left_reason(item)}; run clean again after it")
