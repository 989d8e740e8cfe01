"""deploy: server-side apply the rendered scheduler into a cluster and wait for it."""

from __future__ import annotations

from invoke import Collection, task

from scheduler_build.errors import UserError
from scheduler_build.flows import deploy as deploy_flow
from scheduler_build.inputs.deploy import deploy_inputs
from scheduler_build.progress import log, phase
from scheduler_build.commands._common import emit, flag_help, emit_json, user_errors


@task(default=True, help={
    "kubeconfig": flag_help("deploy.kubeconfig"),
    "context": flag_help("deploy.context"),
    "dry-run": "server-side dry run: the API server validates and admits, nothing is stored; objects in a "
               "namespace the apply would create are checked offline against the server release's schemas (kubeconform)",
    "dir": "a directory rendered by inv config.render (default: render --spec in memory)",
    "spec": flag_help("spec.path", after="; rendered when --dir is not given"),
    "image": "scheduler image when rendering from --spec (default: the spec's image and tag)",
    "no-wait": flag_help("deploy.no_wait"),
    "timeout": flag_help("deploy.timeout"),
    "json": "print the report as JSON on stdout",
    "rotate-certs": "replace the scheduler <-> extender certificates (new CA and leaves) without downtime",
    "allow-version-skew": flag_help("deploy.allow_version_skew", after=" (newer than it, or more than one minor older)"),
})
@user_errors
def deploy(c, kubeconfig=None, context=None, dry_run=False, dir=None, spec=None, image=None, no_wait=False,
           timeout=None, json=False, rotate_certs=False, allow_version_skew=False):
    """Apply the scheduler's manifests with server-side apply (field manager scheduler-build) and wait."""
    inputs = deploy_inputs(c, kubeconfig=kubeconfig, context=context, dry_run=dry_run, dir=dir, spec=spec, image=image,
                           no_wait=no_wait, timeout=timeout, rotate_certs=rotate_certs,
                           allow_version_skew=allow_version_skew)
    to_apply, scheduler_version = deploy_flow.objects(inputs)
    with phase("deploy", f"{len(to_apply)} objects{' (server dry run)' if dry_run else ''}"):
        report = deploy_flow.deploy(inputs, to_apply, scheduler_version)
    if json:
        emit_json(report.as_dict())
    else:
        emit("\n".join(f"{a.kind} {a.namespace + '/' if a.namespace else ''}{a.name}: {a.result}" for a in report.applied))
    if report.available is False:
        for reason in report.reasons:
            log(f"    why: {reason}")
        raise UserError(f"{', '.join(report.deployments)} not available after {inputs.timeout:g}s: "
                        f"{report.reasons[0] if report.reasons else 'no reason reported'}",
                        "every reason found is listed above")


ns = Collection("deploy", deploy)
