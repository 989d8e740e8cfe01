"""`scheduler-build`: the same tasks as `inv`, for pip users without a tasks.py."""

from __future__ import annotations

import difflib
import functools
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import yaml
from invoke import Config, Program
from invoke.exceptions import Exit, ParseError, UncastableEnvVar

from scheduler_build import __version__, safeyaml, settings
from scheduler_build.commands import namespace


class SchedulerBuildConfig(Config):
    """Reads invoke.yaml like `inv` does; environment variables use SCHEDULER_BUILD_."""

    prefix = "invoke"
    env_prefix = "SCHEDULER_BUILD"

    def __init__(self, *args, **kwargs):
        # With a built-in namespace invoke has no project location and never loads a
        # project file: use the cwd, and load its invoke.yaml here (`inv` loads the one
        # beside tasks.py itself).
        kwargs.setdefault("project_location", os.getcwd())
        super().__init__(*args, **kwargs)
        if not kwargs.get("lazy"):
            self.load_project()

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
            raise Exit(f"error: {path}: not a readable invoke.yaml ({reason[:200]}); fix or remove the file",
                       code=2) from None
        if data is not None and not isinstance(data, dict):
            raise Exit(f"error: {path}: not a mapping of settings (got {type(data).__name__}); "
                       "e.g. `k8s: {version: \"1.36\"}`", code=2)
        return data or {}


_UNKNOWN = re.compile(r"^No idea what '(.+)' is!$")
_ARGUMENT = re.compile(r"'?<Argument: ([\w-]+)[^>]*>'?")


def parse_error_line(error: ParseError, program: Program) -> str:
    """invoke's parse error as our one `error:` line; an unknown task or flag gets a "did you mean"."""
    message = str(error)
    match = _UNKNOWN.match(message)
    if not match:  # e.g. "Flag <Argument: timeout (t)> needed value and was not given one!"
        return "error: " + _ARGUMENT.sub(lambda m: "--" + m.group(1).replace("_", "-"), message)
    token, binary = match.group(1), (program.binary or program.name or "inv").replace("[oke]", "")
    context = getattr(error, "context", None)
    if token.startswith("-"):
        task = getattr(context, "name", None)
        names = list(context.flags) + list(context.inverse_flags) if context is not None else []
        names += [flag for ctx in (program.core or [])[:1] for flag in ctx.flags]
        what, more = (f"unknown flag {token} for {task}", f"`{binary} --help {task}` lists its flags") if task \
            else (f"unknown flag {token}", f"`{binary} --help` lists them")
    else:
        names = [alias for name, aliases in program.collection.task_names.items() for alias in (name, *aliases)]
        what, more = f"unknown task '{token}'", f"`{binary} --list` lists the tasks"
    close = difflib.get_close_matches(token, names, n=1, cutoff=0.6)
    return f"error: {what}; " + (f"did you mean '{close[0]}'? ({more})" if close else more)


def _suggesting(program: Program, step: Callable[[], None]) -> Callable[[], None]:
    @functools.wraps(step)
    def wrapper() -> None:
        try:
            step()
        except ParseError as exc:
            raise Exit(parse_error_line(exc, program), code=2) from None
        except BrokenPipeError:  # `inv --list | head`: --list and --help print in parse_cleanup
            _reader_left()

    return wrapper


def env_error_line(exc: Exception) -> str:
    """invoke casts an environment variable to its setting default's type and fails with a bare
    ValueError: name the variable and the setting, and say what the variable may hold."""
    for dotted, default in settings.leaves():
        if isinstance(default, (bool, str)) or default is None:
            continue
        for var in settings.env_vars(dotted):
            value = os.environ.get(var)
            if value is None:
                continue
            try:
                type(default)(value)
            except (TypeError, ValueError):
                kind = "a whole number" if isinstance(default, int) else "a plain number"
                return (f"error: environment variable {var}={value[:60]!r}: not {kind} (setting {dotted}, "
                        f"default {default}); set {kind} or unset it (units such as 5m or 64MiB work in "
                        "invoke.yaml and on the command line)")
    return f"error: an environment variable does not fit its setting ({exc}); fix or unset it"


def _env_checked(step: Callable[[], None]) -> Callable[[], None]:
    @functools.wraps(step)
    def wrapper() -> None:
        try:
            step()
        except (ValueError, UncastableEnvVar) as exc:
            # invoke's executor loads INVOKE_* / SCHEDULER_BUILD_* before the first task runs;
            # a ValueError from anywhere else (a task) is not ours to rephrase.
            frames = [f.f_code.co_name for f, _ in traceback.walk_tb(exc.__traceback__)]
            if "load_shell_env" not in frames:
                raise
            raise Exit(env_error_line(exc), code=2) from None

    return wrapper


def add_suggestions(program: Program) -> None:
    """Parse errors become one `error:` line with a "did you mean", exit 2 (usage); so does an
    environment variable invoke cannot cast to its setting's type.

    `inv` runs invoke's own Program (a tasks.py cannot choose another), and it loads
    tasks.py before parsing the task arguments: tasks.py calls this on that program."""
    if getattr(program, "_suggestions", False):
        return
    for name in ("parse_tasks", "parse_cleanup"):
        setattr(program, name, _suggesting(program, getattr(program, name)))
    program.execute = _env_checked(program.execute)  # type: ignore[method-assign]
    program._suggestions = True  # type: ignore[attr-defined]


program = Program(
    namespace=namespace(),
    name="scheduler-build",
    binary="scheduler-build",
    version=__version__,
    config_class=SchedulerBuildConfig,
)
add_suggestions(program)


def main() -> None:
    try:
        program.run()
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_left()


def _reader_left() -> None:
    """`scheduler-build --list | head`: the reader left; say nothing, like other Unix tools."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(141)
