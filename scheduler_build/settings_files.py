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

from scheduler_build import options, settings
from scheduler_build.errors import UserError

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


def check_environment(prefix: str) -> None:
    """Every set PREFIX_SECTION_KEY variable of a setting, read as that setting's kind."""
    for dotted, default in settings.leaves():
        var = f"{prefix.upper()}_{dotted.replace('.', '_').upper()}"
        if var in os.environ:
            options.convert(dotted, os.environ[var], default, from_flag=False,
                            where=f"environment variable {var}")


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
