"""Shared task plumbing, the one pattern every collection follows.

- `option(c, key, flag)`: every option, value or boolean: flag, then invoke config
  (invoke.yaml, env vars), then settings.DEFAULTS, cast to the default's type.
- `describe(key)` (settings.describe): "default: key = value" for help texts.
- `emit` / `emit_json`: results on stdout, one write; logs go to stderr.
- `user_errors`: a UserError is one line on stderr and its exit code, no traceback.
- `load_spec(c, ...)`: the one spec load of a task (--spec, else spec.path unless a plain build is asked for).
- `build_request(c, ...)`: the one home of "a BuildRequest from settings": every task that builds
  (build, image.build's missing platforms, dev.run, the cluster's components) reads the same
  `builder.*` and `build.*` settings here, flags first.
"""

from __future__ import annotations

import functools
import os
import json
import sys
from pathlib import Path
from typing import Any, Callable

from invoke import Context
from invoke.exceptions import Exit

from scheduler_build import options, settings
from scheduler_build.build import from_spec
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import registry as registry_stage
from scheduler_build.spec.model import Spec
from scheduler_build.errors import UserError
from scheduler_build.settings import describe

__all__ = ["option", "describe", "emit", "emit_json", "user_errors", "load_spec", "build_request", "registry_client",
           "cosign_runner"]


def option(c: Any, key: str, flag: Any = None) -> Any:
    """Resolve one option: the flag when given, else invoke config, else settings.DEFAULTS.

    A flag is "not given" when it is None (value options default to None) or False
    (invoke passes False for an absent boolean flag), so booleans resolve the same
    way: `--force` turns it on, otherwise the setting decides. The result has the
    default's type (bool, int, float); a value that cannot be cast is a UserError
    naming the flag or setting it came from (scheduler_build/options.py)."""
    config = c.config if isinstance(c, Context) else c
    given = None if flag is False else flag
    value = settings.get(config, key, given)
    # options.convert is the one place values become numbers, sizes, durations, enums, versions.
    value = options.convert(key, value, settings.default(key), from_flag=given is not None)
    if key in PATH_KEYS and given is None and value and not Path(value).expanduser().is_absolute():
        # A path from a setting (default, invoke.yaml, env) is relative to the project directory,
        # a path on the command line to the current directory: `cd examples && inv ...` works.
        value = str(project_dir(config) / value)
    return value


PATH_KEYS = frozenset({"spec.path", "paths.dist_dir", "config.out"})


def project_dir(config: Any) -> Path:
    """Where tasks.py / invoke.yaml live (for scheduler-build: the current directory)."""
    prefix = getattr(config, "_project_prefix", None) if config is not None else None
    return Path(prefix) if prefix else Path.cwd()


def load_spec(c: Any, flag: str | None = None, no_spec: bool = False, plain_flags: bool = False) -> Spec | None:
    """The task's build spec, loaded once: --spec, else spec.path unless --no-spec or flags ask for a plain build."""
    path = from_spec.choose_spec(flag, no_spec, option(c, "spec.path"), plain_flags=plain_flags)
    return from_spec.load_spec(path) if path is not None else None


def build_request(c: Any, *, k8s_version: str | None = None, arch: str | None = None, os: str | None = None,
                  component: str | None = None, name: str | None = None, cgo_static: bool = False,
                  builder_image: str | None = None, no_pull: bool = False, dist: Any = None,
                  source_date_epoch: str | None = None, version_suffix: str | None = None,
                  gocache_volume: str | None = None, cache_from: str | None = None, cache_to: str | None = None,
                  spec: Spec | None = None) -> BuildRequest:
    """A BuildRequest from flags, then settings (`k8s.*`, `build.*`, `builder.*`, `paths.dist_dir`), then the
    spec's plugins, patches, version and suffix when one is given (flags keep precedence)."""
    request = BuildRequest(
        k8s_version=option(c, "k8s.version", k8s_version),
        component=option(c, "build.component", component),
        name=option(c, "build.name", name),
        goos=option(c, "build.os", os),
        arch=option(c, "build.arch", arch),
        cgo_static=option(c, "build.cgo_static", cgo_static),
        builder_image=option(c, "builder.image", builder_image),
        pull=False if no_pull else option(c, "builder.pull"),
        goroot=option(c, "builder.goroot"),
        dist_dir=Path(option(c, "paths.dist_dir", dist)),
        cache_dir=settings.cache_dir(c.config if isinstance(c, Context) else c),
        source_date_epoch=str(option(c, "build.source_date_epoch", source_date_epoch) or ""),
        version_suffix=option(c, "build.version_suffix", version_suffix),
        gocache_volume=option(c, "build.gocache_volume", gocache_volume),
        reuse_builder=option(c, "build.reuse_builder"),
        cache_from=option(c, "build.cache_from", cache_from),
        cache_to=option(c, "build.cache_to", cache_to),
    )
    if spec is not None:
        request = from_spec.apply_spec(request, spec, k8s_version=k8s_version, name=name, version_suffix=version_suffix)
    return request


def user_errors(func: Callable) -> Callable:
    """Turn UserError into `error: ...` on stderr and a non-zero exit, no traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            raise Exit(code=exc.exit_code) from None
        except KeyboardInterrupt:
            print("interrupted: the previous good state is kept", file=sys.stderr, flush=True)
            raise Exit(code=130) from None

    return wrapper


def emit(text: str) -> None:
    """Machine-readable results go to stdout, one write."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def emit_json(data: Any, sort_keys: bool = True) -> None:
    """A result as JSON on stdout (indented, keys sorted unless their order means something), one write."""
    emit(json.dumps(data, indent=2, sort_keys=sort_keys))


def registry_client(c, target: registry_stage.Target, ca_cert, insecure, retries) -> registry_stage.Client:
    """The registry client of image.push (and config.chart --push): flags, then the push.* settings."""
    return registry_stage.Client(
        target=target,
        creds=registry_stage.credentials(target.host),
        ca_cert=option(c, "push.ca_cert", ca_cert) or "",
        insecure=option(c, "push.insecure", insecure),
        retries=max(0, option(c, "push.retries", retries)),
        backoff=option(c, "push.backoff"),
    )


def cosign_runner(c) -> cosign_tool.Cosign:
    """The pinned cosign (built on first use) with the key's password: $COSIGN_PASSWORD, else sign.password."""
    password = os.environ.get(cosign_tool.PASSWORD_ENV)
    if password is None:
        password = option(c, "sign.password") or ""
    return cosign_tool.Cosign(cosign_tool.binary(settings.cache_dir(c.config)), password=password)
