"""`inv doctor`: every prerequisite of a build, with its fix."""

from invoke import task
from invoke.exceptions import Exit

from scheduler_build.doctor import checks as doctor_checks
from scheduler_build.errors import for_program
from scheduler_build.inputs.doctor import doctor_inputs
from scheduler_build.commands._common import emit, flag_help, emit_json, user_errors


@task(help={
    "registry": flag_help("registry.url", "none", before="also check that this registry answers: "),
    "json": "print the checks as JSON",
    "node": "check what `cluster.up --node` needs instead (containerd 2, runc, CNI, iptables, cgroups, capabilities)",
    "kubeconfig": flag_help("deploy.kubeconfig", before="also read this cluster's API server version and judge the "
                            "spec's scheduler against it (Kubernetes' version skew policy); "),
    "spec": flag_help("spec.path", after="; --kubeconfig judges its scheduler"),
})
@user_errors
def doctor(c, registry=None, json=False, node=False, kubeconfig=None, spec=None):
    """Check every prerequisite of a build and say how to fix what is missing."""
    checks = doctor_checks.run_all(doctor_inputs(c, registry=registry, node=node, kubeconfig=kubeconfig, spec=spec))
    if json:
        emit_json([check.__dict__ for check in checks])
    else:
        lines = []
        for check in checks:
            mark = "ok  " if check.ok else ("WARN" if not check.required else "FAIL")
            lines.append(f"[{mark}] {check.name}: {for_program(check.detail)}")
            if not check.ok and check.fix:
                lines.append(f"       fix: {for_program(check.fix)}")
        emit("\n".join(lines))
    if any(not check.ok and check.required for check in checks):
        raise Exit("doctor: a build cannot run until the FAIL lines are fixed", code=1)
