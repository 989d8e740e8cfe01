"""k8s: Kubernetes version resolution through the Go module proxy."""

from invoke import Collection, task

from scheduler_build.inputs.common import cache_dir
from scheduler_build.resolve import goproxy
from scheduler_build.resolve import versions as k8s_versions
from scheduler_build.commands._common import emit, emit_json, user_errors


@task(positional=["version"], help={
    "version": "1.36, v1.36, v1.36.2, v1.37.0-rc.1 or latest",
    "json": "print the resolution as JSON on stdout",
})
@user_errors
def resolve(c, version, json=False):
    """Resolve a Kubernetes version to its exact release, Go version and staging replaces."""
    result = k8s_versions.resolve(version, cache_dir(c))
    if json:
        emit(result.to_json())
        return
    lines = [
        f"kubernetes  {result.version}  (requested {result.requested})",
        f"go          {result.go_version}",
        f"supported   {', '.join(result.supported_minors)}",
        f"replaces    {len(result.replaces)} staging modules at {result.staging_version}",
    ]
    lines += [f"  {name} => {name} {pin}" for name, pin in sorted(result.replaces.items())]
    emit("\n".join(lines))


@task(help={"json": "print the minors and their newest patch as JSON"})
@user_errors
def versions(c, json=False):
    """List the supported Kubernetes minors and the newest patch of each."""
    known = goproxy.list_versions(k8s_versions.KUBERNETES_MODULE)
    newest = k8s_versions.newest_patches(known)
    table = {minor: newest[minor] for minor in k8s_versions.supported_minors(known)}
    if json:
        emit_json(table, sort_keys=False)  # oldest minor first
    else:
        emit("\n".join(f"{minor}  {version}" for minor, version in table.items()))


ns = Collection("k8s", resolve, versions)
