"""The kubernetes API client the extender lists, watches and binds with."""

from __future__ import annotations

import os
from typing import Any

from scheduler_build.errors import UserError

MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024  # kubeconfigs with embedded certificates are tens of KiB
MAX_KUBECONFIG_NODES = 1_000_000  # values once aliases are expanded ("billion laughs")


def kube_client(kubeconfig: str | None) -> Any:
    """An ApiClient from a kubeconfig (decided by the extender's front doors: the flag or setting, else
    config.default_kubeconfig), or in-cluster config.

    Returns None when no configuration is found, so the extender still serves
    (not ready) without an API server.
    """
    from kubernetes import client, config  # heavy (~0.4 s to import): only when the extender starts

    if kubeconfig:
        return _from_file(config, kubeconfig, "extender.kubeconfig")
    try:
        config.load_incluster_config()
    except config.ConfigException:
        return None
    return client.ApiClient()


def _from_file(config: Any, path: str, origin: str) -> Any:
    """The client for one kubeconfig file; a file that is not a usable kubeconfig is one UserError line.

    Bounded before the client's own YAML reader sees it: its size, and the yaml module's
    alias expansion and nesting (the client itself walks what it loads)."""
    import yaml  # the kubernetes client's dependency

    hint = "pass a kubeconfig (kind: Config, with clusters, users and contexts), or none to run in-cluster"
    try:
        if os.path.getsize(path) > MAX_KUBECONFIG_BYTES:
            raise UserError(f"{origin} {path}: larger than {MAX_KUBECONFIG_BYTES >> 20} MiB", hint)
        with open(path, encoding="utf-8") as stream:
            doc = yaml.compose(stream, Loader=yaml.SafeLoader)
        if not isinstance(doc, yaml.MappingNode):
            raise UserError(f"{origin} {path}: not a kubeconfig (expected a mapping with kind: Config)", hint)
        _expanded_size(doc, {})
        return config.new_client_from_config(config_file=path)
    except RecursionError:
        raise UserError(f"{origin} {path}: refused: nested too deeply for a kubeconfig", hint) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{origin} {path}: not a readable YAML kubeconfig ({_first_line(exc)})", hint) from None
    except (config.ConfigException, TypeError, AttributeError, ValueError, KeyError) as exc:
        raise UserError(f"{origin} {path}: not a usable kubeconfig ({_first_line(exc)})", hint) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _expanded_size(node: Any, sizes: dict[int, int]) -> int:
    """Values in the document with every alias copied out (each distinct node counted once)."""
    known = sizes.get(id(node))
    if known is not None:
        if known < 0:
            raise ValueError("a YAML alias refers to its own anchor")
        return known
    sizes[id(node)] = -1
    total = 1
    if isinstance(node.value, list):
        for item in node.value:
            for child in (item if isinstance(item, tuple) else (item,)):
                total += _expanded_size(child, sizes)
                if total > MAX_KUBECONFIG_NODES:
                    raise ValueError(f"aliases expand to more than {MAX_KUBECONFIG_NODES} values")
    sizes[id(node)] = total
    return total
