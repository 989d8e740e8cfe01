"""explain: why a pod landed where it did, or nowhere, from the annotations a debuggable build wrote."""

from __future__ import annotations

import os

from invoke import task

from scheduler_build.commands._common import emit, emit_json, flag_help, option, user_errors
from scheduler_build.errors import UserError
from scheduler_build import spec as spec_mod
from scheduler_build.explain import fetch, record, text


@task(help={
    "pod": "the pod's name",
    "namespace": "its namespace (default: default)",
    "kubeconfig": flag_help("deploy.kubeconfig"),
    "context": flag_help("deploy.context"),
    "json": "print the stable JSON document (docs/explain.schema.json) instead of text",
    "top": "how many of the best-scored nodes to show (default: 3)",
    "spec": flag_help("spec.path", after="; explain: the debuggable scheduler's, so a pod without a record is told "
                      "apart as not opted in (no debuggable.podLabel label) or scheduled without the recorder"),
})
@user_errors
def explain(c, pod, namespace="default", kubeconfig=None, context=None, json=False, top=3, spec=None):
    """Why a pod went to its node, or stayed Pending: per plugin, per node, from its annotations alone."""
    kubeconfig = option(c, "deploy.kubeconfig", kubeconfig) or os.environ.get("KUBECONFIG", "")
    if not kubeconfig:
        raise UserError("no kubeconfig given", "pass --kubeconfig K (or set deploy.kubeconfig / $KUBECONFIG)")
    try:
        top = int(top)
    except ValueError:
        raise UserError(f"--top {top!r} is not a number", "e.g. --top 5") from None
    if top < 0:
        raise UserError(f"--top {top} is negative", "e.g. --top 5")
    pod_label = spec_mod.load(spec).debuggable.pod_label if spec else None
    doc = record.explain(fetch.read_pod(kubeconfig, option(c, "deploy.context", context), namespace, pod), top, pod_label)
    if json:
        emit_json(doc)
    else:
        emit(text.render(doc))
