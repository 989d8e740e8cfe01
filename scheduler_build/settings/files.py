"""Settings files and environment variables, checked against the settings table before any task runs.

`scheduler-build` reads its own files (scheduler_build.cli finds them: scheduler-build.yaml walking
up from the working directory, ~/.scheduler-build.yaml, /etc/scheduler-build.yaml; a project's
invoke.yaml, deprecated); `inv` reads invoke's (invoke.yaml beside tasks.py, ~/.invoke.yaml, /etc/invoke.yaml).

Every file and every environment variable of the running program is checked against
settings.DEFAULTS and options.convert: an unknown key gets a "did you mean", a value of the wrong
type one line naming the file and key (or the variable). A user or system file under `inv` is shared
with other invoke-based tools: its unknown sections are theirs and are left alone, but a value where
one of our sections belongs is refused.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from scheduler_build import settings
from scheduler_build.settings import options
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.errors import PROGRAM, UserError

INVOKE_SECTIONS = frozenset({"run", "runners", "sudo", "tasks", "timeouts"})  # invoke's own (Config.global_defaults)
# The key a bare value most likely meant, e.g. `spec: my.yaml` -> `spec: {path: my.yaml}`.
_NATURAL_KEY = {"spec": "path", "image": "repository", "registry": "url", "k8s": "version", "builder": "image",
                "paths": "dist_dir", "buildspec": "path", "cluster": "state_dir"}


def check_file(path: str, data: dict, shared: bool = False) -> None:
    """Every key of one settings file against the table; `shared`: a file other invoke tools read too."""
    for section, value in data.items():
        if section in INVOKE_SECTIONS:
            continue
        if section not in settings.DEFAULTS:
            if shared:
                continue
            raise UserError(f"{path}: unknown section {section!r}",
                            _did_you_mean(section, settings.DEFAULTS) or _sections_hint())
        table = settings.DEFAULTS[section]
        if value is None:  # `build:` with every key commented out: an empty section, nothing set
            continue
        if not isinstance(value, dict):
            natural = _NATURAL_KEY.get(section, next(iter(table)))
            other = " (is this file another invoke-based tool's?)" if shared else ""
            raise UserError(f"{path}: {section}: {options._short(value)} where the section {section} is meant{other}",
                            f"write `{section}: {{{natural}: {value}}}` (keys of {section}: {', '.join(table)})")
        for key, item in value.items():
            dotted = f"{section}.{key}"
            if key not in table:
                close = _did_you_mean(key, table, prefix=f"{section}.")
                raise UserError(f"{path}: unknown setting {dotted}", close or f"keys of {section}: {', '.join(table)}")
            if item is not None:
                options.convert(dotted, item, table[key], from_flag=False, where=f"{path}: {dotted}")


# Variables with the program's prefix that are not settings (registry credentials, registry_auth.py).
NOT_SETTINGS = frozenset({registry_auth.USER_ENV, registry_auth.PASSWORD_ENV})


def check_environment(prefix: str) -> None:
    """Every set PREFIX_SECTION_KEY variable of a setting, read as that setting's kind; an unknown one
    in one of our sections (or any unknown SCHEDULER_BUILD_* one) gets a "did you mean"."""
    prefix = prefix.upper().replace("-", "_")
    known = {f"{prefix}_{dotted.replace('.', '_').upper()}": (dotted, default) for dotted, default in settings.leaves()}
    for var, (dotted, default) in known.items():
        if var in os.environ:
            options.convert(dotted, os.environ[var], default, from_flag=False,
                            where=f"environment variable {var}")
    # Under `inv` the INVOKE_ prefix is invoke's too (INVOKE_RUN_ECHO): only our sections are checked there.
    ours = (f"{prefix}_",) if prefix == "SCHEDULER_BUILD" else tuple(f"{prefix}_{s.upper()}_" for s in settings.DEFAULTS)
    for var in sorted(os.environ):
        if var.startswith(ours) and var not in known and var not in NOT_SETTINGS:
            close = difflib.get_close_matches(var, list(known), n=1, cutoff=0.8)
            raise UserError(f"environment variable {var}: not a setting",
                            f"did you mean {close[0]}?" if close else f"{settings_list()} lists them "
                            f"(each as {prefix}_<SECTION>_<KEY>)")


def check_config(config: Any) -> None:
    """The files a loaded invoke Config read, then the environment of its program (UserError)."""
    ours = getattr(config, "file_prefix", None) == "scheduler-build"
    for level in ("system", "user", "project", "runtime"):
        data, path = getattr(config, f"_{level}", None), getattr(config, f"_{level}_path", None)
        if data and path:
            check_file(path, data, shared=not ours and level in ("system", "user"))
    check_environment(config.env_prefix or config.prefix)


def _did_you_mean(word: str, choices: Any, prefix: str = "") -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {prefix}{close[0]}?" if close else None


def _sections_hint() -> str:
    return "sections: " + ", ".join(settings.DEFAULTS)


def settings_list() -> str:
    """Where the user who ran this program finds every setting: its `help settings` task (the console script
    has one; invoke's `inv` has no help task, so docs/settings.md there)."""
    return "docs/settings.md" if PROGRAM[0] == "inv" else f"`{PROGRAM[0]} help settings`"
