"""builder: the golang container image that compiles everything."""

from invoke import Collection, task

from scheduler_build.engine import connect
from scheduler_build import settings
from scheduler_build.golang import toolchain
from scheduler_build.build import builder_image as builder_stage
from scheduler_build.resolve import versions
from scheduler_build.commands._common import emit, flag_help, negated, option, user_errors


@task(help={
    "goroot": flag_help("builder.goroot"),
    "force": "rebuild even if the image for this Go version exists",
    "go": flag_help("builder.go"),
})
@user_errors
def bootstrap(c, goroot=None, force=False, go=None):
    """Build scheduler-build/golang:<go> locally from the host's (or the proxy's) Go and a busybox rootfs (no pull)."""
    engine = connect()
    goroot = option(c, "builder.goroot", goroot)
    exact = option(c, "builder.go", go)
    chosen = toolchain.choose("", exact, goroot) if exact else None
    built = builder_stage.bootstrap(engine, goroot, force=force, go=chosen)
    emit(f"{built.image} {built.image_id}")


@task(auto_shortflags=False, help={
    "k8s-version": flag_help("k8s.version", after="; its go.mod sets the Go version needed"),
    "image": flag_help("builder.image", before="check "),
    "no-pull": flag_help("builder.pull", before="turn off: "),
    "go": flag_help("builder.go"),
})
@user_errors
def show(c, k8s_version=None, image=None, no_pull=False, go=None):
    """Show which builder image `inv build` would use, bootstrapping it if needed."""
    resolution = versions.resolve(option(c, "k8s.version", k8s_version), settings.cache_dir(c.config))
    engine = connect()
    goroot = option(c, "builder.goroot")
    chosen = builder_stage.select(
        engine,
        resolution.go_version,
        option(c, "builder.image", image),
        option(c, "builder.pull", negated(no_pull)),
        goroot,
        toolchain.choose(resolution.go_version, option(c, "builder.go", go), goroot, f"Kubernetes {resolution.version}"),
    )
    emit(f"{chosen.image} go{chosen.go_version} {chosen.source}")


ns = Collection("builder", bootstrap, show)
