"""The Kubernetes API client from a kubeconfig file: one home for `inv deploy` and the e2e harness.

(The extender loads its own, in-cluster capable, client in extender/cache.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scheduler_build.errors import UserError


def from_kubeconfig(kubeconfig: str | Path, context: str | None = None, *, pool_size: int | None = None) -> Any:
    """An ApiClient for the kubeconfig's (or `context`'s) cluster and user.

    A missing file or a kubeconfig the client cannot use (bad YAML, unknown
    context, no current context) is a UserError naming the file. `pool_size`
    raises the connection pool for callers that share one client across threads.
    """
    from kubernetes import config as kube_config  # optional: heavy, only when a cluster is talked to

    kubeconfig = Path(kubeconfig)
    if not kubeconfig.is_file():
        raise UserError(f"--kubeconfig {kubeconfig}: no such file", "pass the kubeconfig of the target cluster")
    try:
        client = kube_config.new_client_from_config(config_file=str(kubeconfig), context=context or None)
    except kube_config.ConfigException as exc:
        raise UserError(f"--kubeconfig {kubeconfig}: {exc}",
                        "check --context against `kubectl config get-contexts --kubeconfig K`") from None
    if pool_size:
        client.rest_client.pool_manager.connection_pool_kw["maxsize"] = pool_size
    return client
