"""invoke's parse errors and argument quirks rewritten into one `error:` line with a fix.

An unknown task or flag gets a "did you mean"; `TASK --help` is always help; `TASK FILE` is
`TASK --spec FILE`; a switch given a value (`--json=yes`) is named; a settings file or variable that
does not fit the settings table is refused before a task runs. `inv` runs invoke's own Program, so
tasks.py calls `add_suggestions` on it; scheduler-build's program gets the same.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import os
import re
import sys
from typing import Callable

from invoke import Program
from invoke.exceptions import Exit, ParseError

from scheduler_build.errors import UserError


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
        names += [flag for ctx in (program.core or [])[:1] for flag in ctx.flags if flag not in RUN_FLAGS]
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
            if step.__name__ == "parse_tasks":
                _task_argv(program)
            step()
            if step.__name__ == "parse_tasks":
                _refuse_flag_like_positionals(program)
        except ParseError as exc:
            raise Exit(parse_error_line(exc, program), code=2) from None
        except BrokenPipeError:  # `inv --list | head`: --list and --help print in parse_cleanup
            reader_left()

    return wrapper


def _task_argv(program: Program) -> None:
    """Before invoke parses the task arguments: `TASK --help` / `TASK -h` is help whatever the task
    (invoke would take it as a positional value: `image.keygen --help` wrote a key into ./--help), and
    `TASK FILE` is `TASK --spec FILE` for a task that reads one spec."""
    tokens = list(program.core.unparsed)
    own = tokens[:tokens.index("--")] if "--" in tokens else tokens
    tasks = program.collection.task_names
    names = {alias for name, aliases in tasks.items() for alias in (name, *aliases)}
    if own == ["help"] and "help" in names:  # scheduler-build's `help` alone: invoke has no optional positionals
        program.core[0].args["help"]._value = True  # the setter would make it the text "True"
        program.core.unparsed = []
        return
    if own and own[0] in names and ("--help" in own or "-h" in own):
        program.core[0].args["help"].value = own[0]
        program.core.unparsed = []
        return
    own = _hoist_core_flags(program, own, names)
    tokens = own + (tokens[tokens.index("--"):] if "--" in tokens else [])
    program.core.unparsed = tokens
    params: dict = {}
    skip, given, current = False, False, ""
    for i, token in enumerate(own):
        if skip:
            skip = False
        elif token in names:
            task, current, given = program.collection[token], token, False
            params = {} if task.positional else dict(inspect.signature(task.body).parameters)
        elif token.startswith("-") and token != "-":
            _refuse_switch_value(current, token, params)
            skip = "=" not in token and _takes_value(token, params)
            given = given or token.split("=")[0] == "--spec"
        elif current in OPTIONAL_POSITIONAL and not given:  # `init DIR`: invoke has no optional positionals
            tokens[i:i + 1] = [f"--{OPTIONAL_POSITIONAL[current]}", token]
            program.core.unparsed = tokens
            return
        elif "spec" in params and (token == "-" or token.endswith(SPEC_SUFFIXES)):
            if given:
                raise Exit(f"error: {current} reads one spec: --spec and {token!r} both given; give one", code=2)
            tokens[i:i + 1] = ["--spec", token]  # a spec file where one spec is expected
            program.core.unparsed = tokens
            return


# Core flags that mean the same after a task name as before it (`build SPEC -q`, `doctor --config my.yaml`):
# moved before the tasks, unless the task has a flag of its own they could name.
HOISTED = {"-q": "quiet", "--quiet": "quiet", "-v": "verbose", "--verbose": "verbose", "-d": "debug",
           "--debug": "debug", "--config": "config"}


def _hoist_core_flags(program: Program, own: list[str], names: set[str]) -> list[str]:
    """`own` without the core flags given after a task name; their values set on the core arguments."""
    core = program.core[0].args if program.core else {}
    kept, params, hoisted, skip = [], {}, False, False
    for i, token in enumerate(own):
        if skip:
            skip = False
            continue
        flag, eq, value = token.partition("=")
        arg = HOISTED.get(flag)
        if token in names:
            params = {} if program.collection[token].positional else dict(inspect.signature(program.collection[token].body).parameters)
        elif arg in core and params and not _task_has(flag, params):
            if core[arg].kind is bool:
                core[arg].value = True
            else:
                if not eq and i + 1 >= len(own):
                    raise Exit(f"error: {flag} needs a value, e.g. {flag} my.yaml", code=2)
                core[arg].value = value if eq else own[i + 1]
                skip = not eq
            hoisted = True
            continue
        kept.append(token)
    if hoisted and hasattr(program, "core_flags_changed"):
        program.core_flags_changed()
    return kept


def _task_has(flag: str, params: dict) -> bool:
    """Whether a task's own flags could be meant by `flag` (its name, or its first letter as a short flag)."""
    if flag.startswith("--"):
        return flag[2:].replace("-", "_") in params
    return any(name.startswith(flag[1:2]) and name != "c" for name in params)


SPEC_SUFFIXES = (".yaml", ".yml", ".json")
OPTIONAL_POSITIONAL = {"init": "dir"}  # task -> the flag its one bare word stands for


def _refuse_switch_value(task: str, token: str, params: dict) -> None:
    """`--json=yes` / `--force=false`: a switch given a value (invoke would read the value as a task name)."""
    flag, _, value = token.partition("=")
    param = params.get(flag[2:].replace("-", "_")) if flag.startswith("--") and _ else None
    if param is not None and isinstance(param.default, bool):
        from scheduler_build import settings  # loaded already with the tasks

        name = flag[2:].replace("-", "_")
        backed = {key.rsplit(".", 1)[1] for key, default in settings.leaves() if isinstance(default, bool)}
        if name.startswith("no_") and (name in backed or name[3:] in backed or name == "no_pull"):
            off = f"give {flag} to turn it on, --{name[3:].replace('_', '-')} to turn it off"
        elif name in backed:
            off = f"give {flag} to turn it on, --no-{flag[2:]} to turn it off"
        else:
            off = f"give {flag} to turn it on, or leave it out"
        raise Exit(f"error: {task}: {flag} is a switch and takes no value ({token!r}); {off}", code=2)


def _takes_value(flag: str, params: dict) -> bool:
    """Whether a task flag consumes the next word (a parameter whose default is not a boolean)."""
    if flag.startswith("--"):
        param = params.get(flag[2:].replace("-", "_"))
        return param is not None and not isinstance(param.default, bool)
    letter = flag[1:2]
    starting = [p for name, p in params.items() if name.startswith(letter) and name != "c"]
    return bool(starting) and not isinstance(starting[0].default, bool)


def _refuse_flag_like_positionals(program: Program) -> None:
    """A positional value that looks like a flag is a mistake, not a file or version to act on."""
    binary = (program.binary or program.name or "inv").replace("[oke]", "")
    for context in program.tasks:
        for arg in context.positional_args:
            if isinstance(arg.value, str) and arg.value.startswith("-") and arg.value != "-":
                raise Exit(f"error: {context.name}: {arg.name.upper()} {arg.value!r} looks like a flag, not a value; "
                           f"`{binary} {context.name} --help` shows its flags", code=2)


def _settings_checked(program: Program, step: Callable[[], None]) -> Callable[[], None]:
    """Every settings file and environment variable is checked against the table before a task runs."""
    @functools.wraps(step)
    def wrapper() -> None:
        # Imported here, not at the top: the table and its parsers are not needed by --version,
        # --list or TAB completion, which must start fast (bench/startup_bench.py).
        from scheduler_build.settings import files as settings_files

        try:
            settings_files.check_config(program.config)
        except UserError as exc:
            raise Exit(f"error: {exc}", code=2) from None
        step()

    return wrapper


def add_suggestions(program: Program) -> None:
    """Parse errors become one `error:` line with a "did you mean", exit 2 (usage); so does a settings
    file or environment variable that does not fit the settings table. `TASK --help` is always help.

    `inv` runs invoke's own Program (a tasks.py cannot choose another), and it loads
    tasks.py before parsing the task arguments: tasks.py calls this on that program."""
    if getattr(program, "_suggestions", False):
        return
    for name in ("parse_tasks", "parse_cleanup"):
        setattr(program, name, _suggesting(program, getattr(program, name)))
    program.execute = _settings_checked(program, program.execute)  # type: ignore[method-assign]
    program._suggestions = True  # type: ignore[attr-defined]


# invoke's core flags that configure its run() (no task here calls it) or load Python code: hidden and
# refused by scheduler-build, never suggested under `inv` (a user who followed `--dry` for `--dry-run`
# would push or tear down for real).
RUN_FLAGS = frozenset({"--dry", "-R", "--echo", "-e", "--pty", "-p", "--warn-only", "-w", "--hide",
                       "--command-timeout", "-T", "--prompt-for-sudo-password"})


def reader_left() -> None:
    """`scheduler-build --list | head`: the reader left; say nothing, like other Unix tools."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(141)
