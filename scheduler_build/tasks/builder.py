"""builder: the golang container image that compiles everything."""

from invoke import Collection, task

from scheduler_build.build import builder_image as builder_stage
from scheduler_build import engine as docker_api
from scheduler_build.resolve import versions as k8s
from scheduler_build import settings
from scheduler_build.tasks._common import emit, user_errors


@task(help={
    "goroot": "Go root to copy into the image (default: builder.goroot, else `go env GOROOT`)",
    "force": "rebuild even if the image for this Go version exists",
})
@user_errors
def bootstrap(c, goroot=None, force=False):
    """Build scheduler-build/golang:<go> locally from the host's Go and a busybox rootfs (no pull)."""
    engine = docker_api.connect()
    built = builder_stage.bootstrap(engine, settings.get(c.config, "builder.goroot", goroot), force=force)
    emit(f"{built.image} {built.image_id}")


@task(auto_shortflags=False, help={
    "k8s-version": "Kubernetes version whose go.mod sets the Go version needed (default: k8s.version)",
    "image": "an explicit builder image to check (default: builder.image)",
    "no-pull": "never try pulling the official golang image (default: builder.pull decides)",
})
@user_errors
def show(c, k8s_version=None, image=None, no_pull=False):
    """Show which builder image `inv build` would use, bootstrapping it if needed."""
    resolution = k8s.resolve(settings.get(c.config, "k8s.version", k8s_version), settings.cache_dir(c.config))
    engine = docker_api.connect()
    chosen = builder_stage.select(
        engine,
        resolution.go_version,
        settings.get(c.config, "builder.image", image),
        False if no_pull else bool(settings.get(c.config, "builder.pull")),
        settings.get(c.config, "builder.goroot"),
    )
    emit(f"{chosen.image} go{chosen.go_version} {chosen.source}")


ns = Collection("builder", bootstrap, show)
