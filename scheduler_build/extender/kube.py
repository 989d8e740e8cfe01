"""The kubernetes API client the extender lists, watches and binds with."""

from __future__ import annotations

import os
from typing import Any


def kube_client(kubeconfig: str | None) -> Any:
    """An ApiClient from a kubeconfig, $KUBECONFIG/~/.kube/config, or in-cluster config.

    Returns None when no configuration is found, so the extender still serves
    (not ready) without an API server.
    """
    from kubernetes import client, config  # heavy (~0.4 s to import): only when the extender starts

    if kubeconfig:
        return config.new_client_from_config(config_file=kubeconfig)
    default = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    if os.path.exists(default.split(os.pathsep)[0]):
        return config.new_client_from_config(config_file=default.split(os.pathsep)[0])
    try:
        config.load_incluster_config()
    except config.ConfigException:
        return None
    return client.ApiClient()
