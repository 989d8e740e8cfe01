"""Where scheduler-build's settings come from: the files it finds and `--config FILE`.

scheduler-build.yaml found walking up from the working directory (the way `inv` finds tasks.py),
~/.scheduler-build.yaml, /etc/scheduler-build.yaml, SCHEDULER_BUILD_* variables; a project's
invoke.yaml is still read, deprecated. Files are read through the bounded YAML loader.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any

import yaml
from invoke import Config
from invoke.env import Environment
from invoke.exceptions import Exit

from scheduler_build import safeyaml


FILE_NAMES = ("scheduler-build.yaml", "scheduler-build.yml", "scheduler-build.json")
LEGACY_NAME = "invoke.yaml"


def find_project(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a scheduler-build.yaml (.yml, .json)."""
    for directory in (start, *start.parents):
        if any((directory / name).is_file() for name in FILE_NAMES):
            return directory
    return None


class _TextEnvironment(Environment):
    def _cast(self, old: Any, new: Any) -> Any:
        return new


class SchedulerBuildConfig(Config):
    """scheduler-build's own settings files (scheduler-build.yaml, found by walking up from the working
    directory; ~/.scheduler-build.yaml; /etc/scheduler-build.yaml) and SCHEDULER_BUILD_* variables.
    A project's invoke.yaml is still read, with a deprecation line, where no scheduler-build.yaml is found."""

    prefix = "scheduler-build"
    env_prefix = "SCHEDULER_BUILD"

    def __init__(self, *args, **kwargs):
        # With a built-in namespace invoke has no project location and never loads a project
        # file: find it here, the way `inv` finds tasks.py.
        found = find_project(Path.cwd())
        kwargs.setdefault("project_location", str(found or Path.cwd()))
        super().__init__(*args, **kwargs)
        if not kwargs.get("lazy"):
            self.load_project()

    def load_project(self, merge: bool = True) -> None:
        super().load_project(merge=False)
        legacy = Path(self._project_prefix or ".") / LEGACY_NAME
        if not self._project_found and self._project_prefix is not None and legacy.is_file():
            self._set(_project_found=None, _project_path=str(legacy))
            self._load_file(prefix="project", absolute=True, merge=False)
            if not (legacy.parent / "tasks.py").is_file():  # beside a tasks.py it is that project's `inv` file
                print(f"warning: {legacy}: scheduler-build reads scheduler-build.yaml now; rename this file "
                      "(invoke.yaml is still read for a while)", file=sys.stderr, flush=True)
        if merge:
            self.merge()

    def load_shell_env(self) -> None:
        """SCHEDULER_BUILD_* variables as the text written (invoke casts one to the type of the value a file
        set: `2m` over a file's `timeout: 100` was a traceback, `false` over a file's `true` was true);
        options.convert reads the text strictly, like every other value."""
        self.merge()
        self._set(_env=_TextEnvironment(config=self._config, prefix=self._env_prefix).load())
        self.merge()

    def _load_py(self, path: str) -> Any:
        """invoke also tries scheduler-build.py: settings are data, never code; as if absent."""
        raise FileNotFoundError(errno.ENOENT, "not read", path)

    def _load_yaml(self, path: str) -> Any:
        """invoke.yaml (and the system/user files) through the bounded loader: a broken or
        hostile file is one line, not a traceback."""
        try:
            data = safeyaml.load_yaml(safeyaml.read_text(Path(path)))
        except FileNotFoundError:
            raise  # invoke: no such file at this level
        except (OSError, ValueError, yaml.YAMLError) as exc:  # ValueError: InputLimitError, UnicodeDecodeError
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            mark = getattr(exc, "problem_mark", None)
            if mark is not None:
                reason = f"line {mark.line + 1}, column {mark.column + 1}: {getattr(exc, 'problem', None) or reason}"
            raise Exit(f"error: {path}: not a readable settings file ({reason[:200]}); fix or remove the file",
                       code=2) from None
        if data is not None and not isinstance(data, dict):
            raise Exit(f"error: {path}: not a mapping of settings (got {type(data).__name__}); "
                       "e.g. `k8s: {version: \"1.36\"}`", code=2)
        return data or {}


def check_config_flag(value: str | None) -> None:
    """`--config FILE` names a readable .yaml/.yml/.json file (invoke would skip a missing one silently
    and raise a traceback on another extension or a directory)."""
    if not value:
        return
    path = Path(value)
    if path.is_dir():
        raise Exit(f"error: --config {value}: a directory, not a settings file; give a file such as "
                   f"{path / FILE_NAMES[0]}", code=2)
    if not path.is_file():
        raise Exit(f"error: --config {value}: no such file (relative to {Path.cwd()}); give an existing settings "
                   "file, or drop --config", code=2)
    if path.suffix not in (".yaml", ".yml", ".json"):
        raise Exit(f"error: --config {value}: settings files are read by their extension, and {path.suffix or 'none'} "
                   "is not one of .yaml, .yml, .json; rename the file", code=2)
