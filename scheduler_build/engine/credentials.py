"""What a registry is reached with: credentials, and the CA the Docker engine trusts for it.

Credentials: SCHEDULER_BUILD_REGISTRY_USERNAME / _PASSWORD, else the docker
config (`auths`, `credsStore`, `credHelpers`, read by docker-py's auth module,
which runs the credential helpers). Used by image.push, the registry build cache
and the cluster's registry mirrors alike.
"""

from __future__ import annotations

import os
from pathlib import Path

from scheduler_build.errors import UserError

USER_ENV = "SCHEDULER_BUILD_REGISTRY_USERNAME"
PASSWORD_ENV = "SCHEDULER_BUILD_REGISTRY_PASSWORD"
CERTS_D = Path("/etc/docker/certs.d")


def engine_ca(host: str) -> Path | None:
    """The CA the Docker engine trusts for a registry host:port, if one is installed."""
    ca = CERTS_D / host / "ca.crt"
    return ca if ca.is_file() else None


def credentials(host: str, docker_config: str | None = None) -> tuple[str, str] | None:
    """(username, password) from the environment, else docker's config and credential helpers."""
    user, password = os.environ.get(USER_ENV, ""), os.environ.get(PASSWORD_ENV, "")
    if user or password:
        if not (user and password):
            raise UserError(f"only one of {USER_ENV} and {PASSWORD_ENV} is set", "set both, or neither to use `docker login`'s credentials")
        return user, password
    try:
        from docker import auth as docker_auth

        config = docker_auth.load_config(config_path=docker_config)
        found = config.resolve_authconfig(host) if config else None
    except Exception as exc:  # a broken config or a failing credential helper
        raise UserError(f"cannot read credentials for {host} from the docker config: {exc.__class__.__name__}", "check ~/.docker/config.json and its credential helper, or set the environment variables") from None
    if not found:
        return None
    # `auths` entries come back lower-case, credential helpers' answers capitalised.
    user = found.get("username") or found.get("Username") or ""
    password = found.get("password") or found.get("Password") or ""
    if user and password:
        return user, password
    token = found.get("IdentityToken") or found.get("identitytoken") or ""
    if token:
        return "<token>", token
    return None
