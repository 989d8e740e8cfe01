"""plugin: carry an out-of-tree plugin module to another Kubernetes minor."""

from invoke import Collection, task

from scheduler_build.errors import BuildFailed
from scheduler_build.inputs.plugin import retarget_inputs
from scheduler_build.progress import log
from scheduler_build.retarget import run as retarget_mod
from scheduler_build.commands._common import emit, flag_help, emit_json, user_errors


@task(help={
    "path": "the plugin module's root directory (its go.mod)",
    "k8s-version": flag_help("k8s.version", before="the target; "),
    "write": "write the rewritten go.mod (and, once it compiles, the tidied go.mod and go.sum); "
             "without it nothing in --path changes and the go.mod diff is printed",
    "fix": "also port the module's code (new logger arguments, renamed methods, TODO(retarget) stubs for new "
           "interface methods), writing it and go.mod; without it the code diff is only shown",
    "allow-dirty": "with --fix: rewrite a module with uncommitted changes (or outside a git work tree)",
    "json": "print the result (diff, notes, compiles, errors, API changes) as JSON",
})
@user_errors
def retarget(c, path="", k8s_version=None, write=False, fix=False, allow_dirty=False, json=False):
    """Rewrite a plugin module's Kubernetes requirements for another minor, compile it there, explain each error."""
    result = retarget_mod.retarget(retarget_inputs(c, path=path, k8s_version=k8s_version, write=write, fix=fix,
                                                   allow_dirty=allow_dirty))
    if json:
        emit_json(result.to_dict(), sort_keys=False)
    else:
        if not (write or fix) and result.diff:
            emit(result.diff.rstrip("\n"))
        if result.code_diff and not fix:
            emit(result.code_diff.rstrip("\n"))
        for line in result.fixed:
            emit(f"{'fixed' if fix else 'would fix'}: {line}")
        for line in result.not_fixed:
            emit(f"not fixed: {line}")
        for line in result.report:
            emit(line)
        for line in result.api_changes:
            emit(f"change: {line}")
        for item in result.advice:
            emit(f"{item.kind}: {item.line()}")
    verdict = (f"{result.path} {'compiles' if result.compiled else 'does not compile'} against Kubernetes "
               f"{result.version} (written for {result.old_version or 'an unknown release'})"
               + (f"; wrote {', '.join(result.written)}" if result.written else ""))
    if not result.compiled:
        raise BuildFailed(verdict, "fix the errors above (each with the API changes that explain it) and run again")
    log(verdict)


ns = Collection("plugin", retarget)
