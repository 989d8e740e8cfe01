"""The one API call explain makes: GET the pod (any `get pods` permission is enough)."""

from __future__ import annotations

import json

from scheduler_build import kubeclient
from scheduler_build.errors import UserError


def read_pod(kubeconfig: str, context: str | None, namespace: str, name: str) -> dict:
    """The pod as the API returns it (a GET any `get pods` permission allows)."""
    from kubernetes import client as kube_client
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError as TransportError

    api = kube_client.CoreV1Api(kubeclient.from_kubeconfig(kubeconfig, context))
    try:
        response = api.read_namespaced_pod(name, namespace, _preload_content=False, _request_timeout=30)
    except ApiException as exc:
        if exc.status == 404:
            raise UserError(f"pod {namespace}/{name} not found", "check the name and -n NAMESPACE") from None
        raise UserError(f"reading pod {namespace}/{name}: HTTP {exc.status} {exc.reason}",
                        "explain needs `get pods` in that namespace") from None
    except (OSError, TransportError) as exc:
        raise UserError(f"reading pod {namespace}/{name}: {exc}", "check --kubeconfig and that the cluster answers") from None
    return json.loads(response.data)
