"""deploy: server-side apply the rendered scheduler into a cluster and wait for it."""

from __future__ import annotations

import os
from pathlib import Path

from invoke import Collection, task

from scheduler_build.deploy import apply
from scheduler_build import kubeclient
from scheduler_build.config import render
from scheduler_build.config import target
from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase
from scheduler_build.commands._common import describe, emit, emit_json, option, user_errors


@task(default=True, help={
    "kubeconfig": f"kubeconfig of the target cluster ({describe('deploy.kubeconfig', '$KUBECONFIG')})",
    "context": f"kubeconfig context ({describe('deploy.context', 'the current context')})",
    "dry-run": "server-side dry run: the API server validates and admits, nothing is stored; objects in a "
               "namespace the apply would create are checked offline against the server release's schemas (kubeconform)",
    "dir": "a directory rendered by inv config.render (default: render --spec in memory)",
    "spec": f"the build spec to render when --dir is not given ({describe('spec.path')})",
    "image": "scheduler image when rendering from --spec (default: the spec's image and tag)",
    "no-wait": f"return after applying instead of waiting for the Deployment to be available ({describe('deploy.no_wait')})",
    "timeout": f"seconds to wait for availability ({describe('deploy.timeout')})",
    "json": "print the report as JSON on stdout",
    "rotate-certs": "replace the scheduler <-> extender certificates (new CA and leaves) without downtime",
    "allow-version-skew": "deploy a scheduler outside Kubernetes' skew policy (newer than the API server, or more "
                          f"than one minor older) ({describe('deploy.allow_version_skew')})",
})
@user_errors
def deploy(c, kubeconfig=None, context=None, dry_run=False, dir=None, spec=None, image=None, no_wait=False,
           timeout=None, json=False, rotate_certs=False, allow_version_skew=False):
    """Apply the scheduler's manifests with server-side apply (field manager scheduler-build) and wait."""
    kubeconfig = option(c, "deploy.kubeconfig", kubeconfig) or os.environ.get("KUBECONFIG", "")
    if not kubeconfig:
        raise UserError("no kubeconfig given", "pass --kubeconfig K (or set deploy.kubeconfig / $KUBECONFIG)")
    kubeclient.check_kubeconfig(kubeconfig)
    image = render.check_image_flag(image) if image else None
    if dir:
        objects = apply.load_dir(Path(dir))
        scheduler_version = apply.scheduler_version_of(objects)
    else:
        loaded = spec_mod.load(option(c, "spec.path", spec))
        scheduler_version = target.kubernetes_release(loaded, None, settings.cache_dir(c.config))
        ref = image or render.image_ref(loaded, scheduler_version)
        files = render.render_files(loaded, ref)
        objects = apply.load_files(files)
    wait = not option(c, "deploy.no_wait", no_wait)
    timeout_s = option(c, "deploy.timeout", timeout)
    with phase("deploy", f"{len(objects)} objects{' (server dry run)' if dry_run else ''}"):
        report = apply.deploy(objects, Path(kubeconfig), option(c, "deploy.context", context),
                                   dry_run=bool(dry_run), wait=wait, timeout=float(timeout_s),
                                   rotate_certs=bool(rotate_certs), cache_dir=settings.cache_dir(c.config),
                                   scheduler_version=scheduler_version,
                                   allow_skew=option(c, "deploy.allow_version_skew", allow_version_skew))
    if json:
        emit_json(report.as_dict())
    else:
        emit("\n".join(f"{a.kind} {a.namespace + '/' if a.namespace else ''}{a.name}: {a.result}" for a in report.applied))
    if report.available is False:
        for reason in report.reasons:
            log(f"    why: {reason}")
        raise UserError(f"{', '.join(report.deployments)} not available after {timeout_s}s: "
                        f"{report.reasons[0] if report.reasons else 'no reason reported'}",
                        "every reason found is listed above")


ns = Collection("deploy", deploy)
