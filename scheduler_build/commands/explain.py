"""explain: why a pod landed where it did, or nowhere, from the annotations a debuggable build wrote."""

from __future__ import annotations

from invoke import task

from scheduler_build.commands._common import emit, emit_json, flag_help, user_errors
from scheduler_build.explain import fetch, record, text
from scheduler_build.inputs.explain import explain_inputs


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
    decided = explain_inputs(c, pod=pod, namespace=namespace, kubeconfig=kubeconfig, context=context, top=top,
                             spec=spec)
    doc = record.explain(fetch.read_pod(decided.kubeconfig, decided.context, decided.namespace, decided.pod),
                         decided.top, decided.pod_label)
    if json:
        emit_json(doc)
    else:
        emit(text.render(doc))
