"""Option resolution: flag, then invoke config (invoke.yaml, env vars), then default.

Invoke's own configuration system does the loading (project invoke.yaml, the
user's files, environment variables with the program's prefix); this module only
reads the merged result so every task resolves options the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Defaults for every setting, registered on the root collection; invoke merges
# files and environment variables over them. Env vars only reach keys listed here.
DEFAULTS: dict[str, Any] = {
    "k8s": {
        # A minor ("1.36") resolves to its newest patch; "latest" to the newest release.
        "version": "1.36",
    },
    "paths": {
        "cache_dir": "",  # empty: $XDG_CACHE_HOME/scheduler-build or ~/.cache/scheduler-build
        "dist_dir": "dist",
    },
    "builder": {
        "image": "",  # empty: official golang:<go> if present or pullable, else bootstrapped
        "pull": True,  # try pulling the official image before falling back
        "goroot": "",  # empty: `go env GOROOT` of the host
    },
    "build": {
        "name": "",  # dist/<name>/...; empty: the component name
        "component": "kube-scheduler",
        "os": "linux",
        "arch": "",  # empty: the host's architecture
        "cgo_static": False,
        "source_date_epoch": "",  # empty: $SOURCE_DATE_EPOCH, else the release's commit time
        "version_suffix": "",
        "gocache_volume": "scheduler-build-gocache",
    },
    "cluster": {
        "state_dir": "",  # empty: <cache_dir>/cluster
        "apiserver": "",  # empty: build kube-apiserver of k8s.version with our own build
        "etcd": "/usr/bin/etcd",  # Debian's etcd-server
        "timeout": 180,  # seconds for each process to become ready (a loaded 2-core machine)
    },
    "image": {
        "platforms": "",  # empty: the spec's platforms, else the host's
        "version": "",  # empty: the spec's version, else 0.1.0 (tag <k8s-version>-<version>)
        "repository": "",  # empty: the spec's image.repository, else scheduler-build/<name>
        "licenses": "Apache-2.0",  # org.opencontainers.image.licenses (Kubernetes' licence)
        "source": "",  # org.opencontainers.image.source; empty: git's origin URL
        "force": False,
        "extender_tag": "",  # empty: scheduler-build/extender:<toolkit version>
        "debian_mirror": "http://deb.debian.org/debian",  # debootstrap's mirror for the extender's base
    },
    "push": {
        "retries": 4,  # per request, on connection errors, 5xx and 429
        "backoff": 0.5,  # first delay in seconds, doubled per retry, capped at 8
        "insecure": False,  # allow plain HTTP to non-loopback registries
        "ca_cert": "",  # empty: /etc/docker/certs.d/<host:port>/ca.crt, else the system CAs
    },
    "buildspec": {
        # `inv build` with no --spec builds this spec (plugins + patches); --no-spec,
        # --k8s-version or --component without --spec build plain kube-scheduler.
        "path": "examples/underlay/scheduler.yaml",
        "all_platforms": False,  # build every platform the spec lists, not just the host's
    },
    "scaffold": {
        "k8s_version": "",  # empty: k8s.version
        "force": False,  # replace a non-empty --out
    },
    "config": {
        "spec": "examples/underlay/scheduler.yaml",  # the build spec config.* and deploy read
        "out": "",  # empty: <paths.dist_dir>/config/<name>
        "runner_image": "",  # empty: the newest local scheduler-build/golang:* (runs the binary, no network)
        "scheduler_name": "default-scheduler",  # migrate-policy's profile name
        "fields_only": False,
    },
    "deploy": {
        "kubeconfig": "",  # empty: $KUBECONFIG
        "context": "",
        "timeout": 300,  # seconds to wait for the Deployment to become available
        "no_wait": False,
    },
    "registry": {
        "url": "",  # HOST[:PORT]/REPO, checked by `inv doctor` when set
    },
    "extender": {
        # `inv extender.serve`; the console script scheduler-extender takes the same as flags.
        "host": "127.0.0.1",
        "port": 8888,
        "kubeconfig": "",  # empty: $KUBECONFIG, ~/.kube/config, else in-cluster, else none (never ready)
        "policy": "underlay-ip",
        "url_prefix": "/",
        "filter_verb": "filter",
        "prioritize_verb": "prioritize",
        "preempt_verb": "preempt",
        "bind_verb": "bind",
        "max_body_bytes": 64 * 1024 * 1024,  # NodeLists of 5000 nodes are ~30 MB
        "assume_ttl": 30.0,  # seconds a pod the extender bound counts before the watch confirms it
        "tls_cert": "",
        "tls_key": "",
        "tls_client_ca": "",  # set: mutual TLS, clients need a certificate signed by this CA
        "log_level": "info",
    },
}


def get(config: Any, dotted: str, flag: Any = None) -> Any:
    """Resolve one option: an explicit flag wins, then invoke config, then DEFAULTS."""
    if flag is not None:
        return flag
    node: Any = config
    for part in dotted.split("."):
        try:
            node = node[part]
        except (KeyError, TypeError):
            node = _default(dotted)
            break
    return node


def _default(dotted: str) -> Any:
    node: Any = DEFAULTS
    for part in dotted.split("."):
        node = node[part]
    return node


def cache_dir(config: Any = None) -> Path:
    configured = get(config, "paths.cache_dir") if config is not None else ""
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "scheduler-build"
