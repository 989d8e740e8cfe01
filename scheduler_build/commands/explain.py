"""explain: why a pod landed where it did, or nowhere, from the annotations a debuggable build wrote."""

from __future__ import annotations

import json as json_mod
import os

from invoke import task

from scheduler_build import kubeclient
from scheduler_build.commands._common import emit, emit_json, option, user_errors
from scheduler_build.errors import UserError
from scheduler_build.explain import record, text


def read_pod(kubeconfig: str, context: str | None, namespace: str, name: str) -> dict:
    """The pod as the API returns it (a GET any `get pods` permission allows)."""
    from kubernetes import client as kube_client
    from kubernetes.client.rest import ApiException

    api = kube_client.CoreV1Api(kubeclient.from_kubeconfig(kubeconfig, context))
    try:
        response = api.read_namespaced_pod(name, namespace, _preload_content=False, _request_timeout=30)
    except ApiException as exc:
        if exc.status == 404:
            raise UserError(f"pod {namespace}/{name} not found", "check the name and -n NAMESPACE") from None
        raise UserError(f"reading pod {namespace}/{name}: HTTP {exc.status} {exc.reason}",
                        "explain needs `get pods` in that namespace") from None
    except OSError as exc:
        raise UserError(f"reading pod {namespace}/{name}: {exc}", "check --kubeconfig and that the cluster answers") from None
    return json_mod.loads(response.data)


@task(help={
    "pod": "the pod's name",
    "namespace": "its namespace (default: default)",
    "kubeconfig": f"kubeconfig of the cluster (default: deploy.kubeconfig, else $KUBECONFIG)",
    "context": "kubeconfig context (default: deploy.context, else the current context)",
    "json": "print the stable JSON document (docs/explain.schema.json) instead of text",
    "top": "how many of the best-scored nodes to show (default: 3)",
})
@user_errors
def explain(c, pod, namespace="default", kubeconfig=None, context=None, json=False, top=3):
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
    doc = record.explain(read_pod(kubeconfig, option(c, "deploy.context", context), namespace, pod), top)
    if json:
        emit_json(doc)
    else:
        emit(text.render(doc))
