"""scaffold: generate out-of-tree scheduler plugin modules from templates/scaffold/."""

from invoke import Collection, task

from scheduler_build.scaffold import generate
from scheduler_build.inputs.scaffold import scaffold_inputs
from scheduler_build.progress import phase
from scheduler_build.commands._common import describe, emit, flag_help, emit_json, user_errors


@task(help={
    "name": "plugin name, an exported Go identifier, e.g. UnderlayIPLimit",
    "points": "comma-separated extension points: " + ",".join(generate.POINT_KEYS),
    "module": "Go module path of the new module, e.g. example.com/acme/underlay",
    "k8s-version": flag_help("scaffold.k8s_version", describe("k8s.version").removeprefix("default: ")),
    "out": "output directory; must be new or empty unless --force",
    "force": flag_help("scaffold.force"),
    "dry-run": "print what would be created, replaced, removed and kept, write nothing",
    # `tidy` rather than `no_tidy`: invoke would give `no_tidy` the short flag `--` (n and o are taken).
    "tidy": "run `go mod tidy` (the default); --no-tidy skips it (no go.sum; offline use)",
    "json": "print the result (directory, version, package, files) as JSON",
})
@user_errors
def plugin(c, name="", points="", module="", k8s_version=None, out="", force=False, tidy=True, json=False,
           dry_run=False):
    """Generate a complete Go module for a scheduling-framework plugin (plugin, args, tests, main, config)."""
    request = scaffold_inputs(c, name=name, points=points, module=module, k8s_version=k8s_version, out=out,
                              force=force, tidy=tidy, dry_run=dry_run)
    with phase("scaffold", f"{name} ({points}) for Kubernetes {request.k8s_version}"):
        result = generate.scaffold(request)
    steps = result.plan.lines() if result.plan else []
    if json:
        emit_json({"out": str(result.out), "k8s_version": result.k8s_version, "package": result.package,
                   "files": result.files, "plan": steps, "dry_run": bool(dry_run)})
    elif dry_run:
        emit("\n".join(steps) or "nothing to do")
    else:
        emit(str(result.out))


ns = Collection("scaffold", plugin)
