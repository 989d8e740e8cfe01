"""`option`: one value, decided by the one precedence rule and typed; `cache_dir`: the cache directory, decided
the same way; `load_spec`: the one spec load (which spec a task reads, and reading it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from invoke import Context

from scheduler_build import epoch, settings
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError
from scheduler_build.settings import options
from scheduler_build.settings import precedence
from scheduler_build.spec.errors import SPEC_HINT
from scheduler_build.spec.model import Spec


class _Off:
    """An explicit `--no-X`: off, and unlike an absent flag (False) it overrides the settings."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "OFF"


OFF = _Off()


def option(c: Any, key: str, flag: Any = None, spec: Any = None, spec_field: str = "") -> Any:
    """Resolve one option by the one precedence rule (settings.decide): flag > spec > environment >
    settings file > default.

    A flag is "not given" when it is None (value options default to None) or False
    (invoke passes False for an absent boolean flag), so booleans resolve the same
    way: `--force` turns it on, otherwise the setting decides. `spec` is the spec's value for
    this setting (None or "": the spec leaves it open; `spec_field` names it). The result has the
    default's type (bool, int, float); a value that cannot be cast is a UserError
    naming the flag or setting it came from (scheduler_build/settings/options.py)."""
    config = c.config if isinstance(c, Context) else c
    given = None if flag is False else (False if flag is OFF else flag)
    value = precedence.decide(config, key, given, spec, spec_field)
    from_spec = given is None and spec not in (None, "")
    # options.convert is the one place values become numbers, sizes, durations, enums, versions.
    value = options.convert(key, value, settings.default(key), from_flag=given is not None,
                            where=f"the spec's {spec_field or key}" if from_spec else None)
    if key in PATH_KEYS and given is None and not from_spec and value and not Path(value).expanduser().is_absolute():
        # A path from a setting (default, invoke.yaml, env) is relative to the project directory,
        # a path on the command line to the current directory: `cd examples && inv ...` works.
        value = str(project_dir(config) / value)
    return value


PATH_KEYS = frozenset({"spec.path", "paths.dist_dir", "config.out"})


def project_dir(config: Any) -> Path:
    """Where tasks.py / invoke.yaml live (for scheduler-build: the current directory)."""
    prefix = getattr(config, "_project_prefix", None) if config is not None else None
    return Path(prefix) if prefix else Path.cwd()


def cache_dir(c: Any) -> Path:
    """paths.cache_dir, decided (empty: $XDG_CACHE_HOME/scheduler-build or ~/.cache/scheduler-build)."""
    return settings.cache_dir(c.config if isinstance(c, Context) else c)


def kubeconfig_path(c: Any, flag: str | None = None) -> str:
    """The one kubeconfig rule of every task that talks to a cluster (deploy, explain, dev.run, doctor):
    --kubeconfig, else deploy.kubeconfig, else $KUBECONFIG (its first file, as kubectl reads the list's
    first for writing); empty when none is given. Not checked: the caller says whether one is required."""
    chosen = option(c, "deploy.kubeconfig", flag)
    if chosen:
        return str(chosen)
    return os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]


def source_date_epoch(c: Any, flag: Any = None) -> str:
    """The one clock of reproducible outputs, read once: --source-date-epoch, else build.source_date_epoch, else
    $SOURCE_DATE_EPOCH (checked now); empty: each output's own fallback (a release's time, the binary's date)."""
    value = str(option(c, "build.source_date_epoch", flag) or "").strip()
    origin = "--source-date-epoch" if flag not in (None, "") else "build.source_date_epoch"
    if not value:
        value, origin = os.environ.get("SOURCE_DATE_EPOCH", "").strip(), "SOURCE_DATE_EPOCH"
    if value:
        epoch.parse(value, origin)
    return value


def environment(name: str) -> str:
    """A variable of the environment that is not a setting (HOME, GOPATH): read here, where every input is."""
    return os.environ.get(name, "")


def choose_spec(flag: str | None, no_spec: bool, configured: str | None, plain_flags: bool) -> Path | None:
    """--spec wins; --no-spec, or --k8s-version/--component without --spec, mean a plain build."""
    if flag:
        return Path(flag)
    if no_spec or plain_flags or not configured:
        return None
    return Path(configured)


def spec_at(path: Path) -> Spec:
    """The spec at `path`; a missing file says where it was looked for and how to build without one."""
    if not spec_mod.is_stdin(path) and not Path(path).is_file():
        raise UserError(
            f"build spec {path} not found (relative to {Path.cwd()})",
            f"pass --spec PATH to an existing build spec; {SPEC_HINT}; --no-spec builds a plain kube-scheduler",
        )
    return spec_mod.load(path)


def load_spec(c: Any, flag: str | None = None, no_spec: bool = False, plain_flags: bool = False) -> Spec | None:
    """The task's build spec, loaded once: --spec, else spec.path unless --no-spec or flags ask for a plain build."""
    configured = option(c, "spec.path")
    path = choose_spec(flag, no_spec, configured, plain_flags=plain_flags)
    if path is None and plain_flags and not no_spec and configured and Path(configured).is_file():
        precedence.note(f"a plain kube-scheduler: --k8s-version/--component without --spec leave the spec "
                        f"{configured} unread (pass --spec {configured} to build it, --no-spec to silence this)")
    return spec_at(path) if path is not None else None
