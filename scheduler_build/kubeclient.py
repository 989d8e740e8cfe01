"""The Kubernetes API client from a kubeconfig file: one home for `inv deploy` and the e2e harness.

(The extender loads its own, in-cluster capable, client in extender/cache.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scheduler_build import safeyaml
from scheduler_build.errors import UserError

_KUBECONFIG_HINT = "pass the kubeconfig of the target cluster (kind: Config, with clusters, users and contexts)"


def check_kubeconfig(kubeconfig: str | Path, flag: str = "--kubeconfig") -> dict:
    """The kubeconfig as a mapping, or a UserError naming the file and what is wrong with it.

    Read through the bounded loader, so a hostile file is refused in well under a second,
    and checked for the shape the client needs before it can fail with a TypeError."""
    path = Path(kubeconfig)
    where = f"{flag} {path}"
    if not path.is_file():
        raise UserError(f"{where}: no such file", "pass the kubeconfig of the target cluster")
    try:
        doc = safeyaml.load_yaml(safeyaml.read_text(path))
    except safeyaml.InputLimitError as exc:
        raise UserError(f"{where}: refused: {exc}", _KUBECONFIG_HINT) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{where}: not a readable YAML kubeconfig ({str(exc).splitlines()[0]})", _KUBECONFIG_HINT) from None
    if not isinstance(doc, dict) or doc.get("kind", "Config") != "Config":
        raise UserError(f"{where}: not a kubeconfig (expected a mapping with kind: Config)", _KUBECONFIG_HINT)
    for key in ("clusters", "contexts", "users"):
        if not isinstance(doc.get(key) or [], list):
            raise UserError(f"{where}: {key} must be a list", _KUBECONFIG_HINT)
    if not doc.get("clusters"):
        raise UserError(f"{where}: lists no clusters", _KUBECONFIG_HINT)
    return doc


def from_kubeconfig(kubeconfig: str | Path, context: str | None = None, *, pool_size: int | None = None) -> Any:
    """An ApiClient for the kubeconfig's (or `context`'s) cluster and user.

    A missing file or a kubeconfig the client cannot use (bad YAML, unknown
    context, no current context) is a UserError naming the file. `pool_size`
    raises the connection pool for callers that share one client across threads.
    """
    from kubernetes import config as kube_config  # optional: heavy, only when a cluster is talked to

    kubeconfig = Path(kubeconfig)
    check_kubeconfig(kubeconfig)
    try:
        client = kube_config.new_client_from_config(config_file=str(kubeconfig), context=context or None)
    except (kube_config.ConfigException, TypeError, AttributeError, ValueError) as exc:
        raise UserError(f"--kubeconfig {kubeconfig}: {exc}",
                        "check --context against `kubectl config get-contexts --kubeconfig K`") from None
    if pool_size:
        client.rest_client.pool_manager.connection_pool_kw["maxsize"] = pool_size
    return client
