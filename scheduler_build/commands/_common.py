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
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from invoke import Argument, Context, Task
from invoke.exceptions import Exit

from scheduler_build import options, settings, signals
from scheduler_build.build import from_spec
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import registry as registry_stage
from scheduler_build.publish import registry_auth
from scheduler_build import spec as spec_mod
from scheduler_build.spec.model import Spec
from scheduler_build.errors import UserError
from scheduler_build.settings import describe

__all__ = ["option", "describe", "emit", "emit_json", "user_errors", "negated", "add_inverse_flags", "OFF",
           "load_spec", "build_request", "registry_client", "cosign_runner", "cosign_password"]


class _Off:
    """An explicit `--no-X`: off, and unlike an absent flag (False) it overrides the settings."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "OFF"


OFF = _Off()


def option(c: Any, key: str, flag: Any = None) -> Any:
    """Resolve one option: the flag when given, else invoke config, else settings.DEFAULTS.

    A flag is "not given" when it is None (value options default to None) or False
    (invoke passes False for an absent boolean flag), so booleans resolve the same
    way: `--force` turns it on, otherwise the setting decides. The result has the
    default's type (bool, int, float); a value that cannot be cast is a UserError
    naming the flag or setting it came from (scheduler_build/options.py)."""
    config = c.config if isinstance(c, Context) else c
    given = None if flag is False else (False if flag is OFF else flag)
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
        except KeyboardInterrupt as exc:  # Ctrl-C, and SIGTERM/SIGHUP (signals.py): the same clean-up ran
            raise Exit(code=signals.report(exc)) from None

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
        creds=registry_auth.credentials(target.host),
        ca_cert=option(c, "push.ca_cert", ca_cert) or "",
        insecure=option(c, "push.insecure", insecure),
        retries=max(0, option(c, "push.retries", retries)),
        backoff=option(c, "push.backoff"),
    )


def cosign_runner(c) -> cosign_tool.Cosign:
    """The pinned cosign (built on first use) with the key's password: $COSIGN_PASSWORD, else sign.password."""
    return cosign_tool.Cosign(cosign_tool.binary(settings.cache_dir(c.config)), password=cosign_password(c))


def cosign_password(c) -> str:
    """The key's password: $COSIGN_PASSWORD, else sign.password (either may be empty)."""
    password = os.environ.get(cosign_tool.PASSWORD_ENV)
    return option(c, "sign.password") or "" if password is None else password


def negated(flag: Any) -> Any:
    """A negative flag (`--no-pull`) as the value of its positive setting (builder.pull) for option()."""
    return OFF if flag is True else (True if flag is OFF else None)


def _inverse(name: str) -> str | None:
    """The inverse of a boolean flag that a boolean setting stands behind: force -> no_force, no_wait -> wait."""
    names = {key.rsplit(".", 1)[1] for key, value in settings.leaves() if isinstance(value, bool)} | {"no_pull"}
    if name not in names:
        return None
    return name[3:] if name.startswith("no_") else f"no_{name}"


def add_inverse_flags(task: Task) -> None:
    """Give every boolean flag with a boolean setting behind it its inverse (`--no-force`, `--wait`),
    so the command line can turn off what a settings file turns on. The task sees OFF for the inverse."""
    if getattr(task, "_inverse_flags", False):  # tasks are module-level: namespace() may run twice
        return
    task._inverse_flags = True  # type: ignore[attr-defined]
    # From the signature: get_arguments() consumes the task's help texts (invoke pops them).
    pairs = {inv: name for name, param in inspect.signature(task.body).parameters.items()
             if param.default is False and (inv := _inverse(name))}
    if not pairs:
        return
    original_arguments, body = task.get_arguments, task.body

    def get_arguments(ignore_unknown_help: bool | None = None) -> list[Argument]:
        extra = [Argument(name=inv, kind=bool, default=False, help=f"turn --{flag.replace('_', '-')} off, "
                          "whatever the settings say") for inv, flag in pairs.items()]
        return original_arguments(ignore_unknown_help) + extra

    @functools.wraps(body)
    def with_inverses(*args: Any, **kwargs: Any) -> Any:
        for inv, flag in pairs.items():
            if kwargs.pop(inv, False):
                if kwargs.get(flag):
                    print(f"error: --{flag.replace('_', '-')} and --{inv.replace('_', '-')} contradict each other; "
                          "give one", file=sys.stderr, flush=True)
                    raise Exit(code=2)
                kwargs[flag] = OFF
        return body(*args, **kwargs)

    task.get_arguments = get_arguments  # type: ignore[method-assign]
    task.body = with_inverses


def accept_spec_on_stdin(task: Task) -> None:
    """`--spec -`: the spec is read from standard input, as kubectl reads `-f -`: once, into memory
    (spec/load.py), named `<stdin>` in messages; its relative paths (e.g. `./plugins/x`) mean what they
    would in a file in the working directory. Nothing is written: a read-only checkout works."""
    if "spec" not in inspect.signature(task.body).parameters or getattr(task, "_spec_stdin", False):
        return
    task._spec_stdin = True  # type: ignore[attr-defined]
    body = task.body

    @functools.wraps(body)
    def with_stdin(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("spec") == "-":
            try:
                spec_mod.stdin_text()  # read now: a task may load the spec after it has started work
            except UserError as exc:
                print(f"error: {exc}", file=sys.stderr, flush=True)
                raise Exit(code=exc.exit_code) from None
            kwargs["spec"] = spec_mod.STDIN_NAME  # the name every message gives it
        return body(*args, **kwargs)

    task.body = with_stdin
