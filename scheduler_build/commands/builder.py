"""builder: the golang container image that compiles everything."""

from invoke import Collection, task

from scheduler_build.engine import connect
from scheduler_build.golang import toolchain
from scheduler_build.build import builder_image as builder_stage
from scheduler_build.resolve import versions
from scheduler_build.commands._common import emit, flag_help, negated, user_errors
from scheduler_build.inputs.builder import builder_inputs


@task(help={
    "goroot": flag_help("builder.goroot"),
    "force": "rebuild even if the image for this Go version exists",
    "go": flag_help("builder.go"),
})
@user_errors
def bootstrap(c, goroot=None, force=False, go=None):
    """Build scheduler-build/golang:<go> locally from the host's (or the proxy's) Go and a busybox rootfs (no pull)."""
    decided = builder_inputs(c, goroot=goroot, go=go)
    engine = connect()
    chosen = toolchain.choose("", decided.go, decided.goroot) if decided.go else None
    built = builder_stage.bootstrap(engine, decided.goroot, force=force, go=chosen)
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
    decided = builder_inputs(c, k8s_version=k8s_version, image=image, pull=negated(no_pull), go=go)
    resolution = versions.resolve(decided.k8s_version, decided.cache_dir)
    engine = connect()
    chosen = builder_stage.select(
        engine,
        resolution.go_version,
        decided.image,
        decided.pull,
        decided.goroot,
        toolchain.choose(resolution.go_version, decided.go, decided.goroot, f"Kubernetes {resolution.version}"),
    )
    emit(f"{chosen.image} go{chosen.go_version} {chosen.source}")


ns = Collection("builder", bootstrap, show)
