"""`scheduler-build`: the same tasks as `inv`, for pip users without a tasks.py."""

from __future__ import annotations

import difflib
import errno
import functools
import inspect
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import yaml
from invoke import Argument, Collection, Config, Program
from invoke.parser import ParserContext
from invoke.exceptions import Exit, ParseError

from scheduler_build import __version__, about, cli_listing, progress, safeyaml
from scheduler_build import errors
from scheduler_build.errors import UserError


FILE_NAMES = ("scheduler-build.yaml", "scheduler-build.yml", "scheduler-build.json")
LEGACY_NAME = "invoke.yaml"


def find_project(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a scheduler-build.yaml (.yml, .json)."""
    for directory in (start, *start.parents):
        if any((directory / name).is_file() for name in FILE_NAMES):
            return directory
    return None


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
            _reader_left()

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
    params: dict = {}
    skip, given, current = False, False, ""
    for i, token in enumerate(own):
        if skip:
            skip = False
        elif token in names:
            task, current, given = program.collection[token], token, False
            params = {} if task.positional else dict(inspect.signature(task.body).parameters)
        elif token.startswith("-") and token != "-":
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


SPEC_SUFFIXES = (".yaml", ".yml", ".json")
OPTIONAL_POSITIONAL = {"init": "dir"}  # task -> the flag its one bare word stands for


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
        from scheduler_build import settings_files

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
_KEPT_CORE = ("complete", "debug", "help", "list", "list-depth", "list-format", "print-completion-script", "version",
              "write-pyc")


class SchedulerBuildProgram(Program):
    """invoke's Program with the flags that mean something here: no run-related core flags,
    `--config FILE` (no `-f`, which swallowed the task name), `-q/--quiet`, `-v/--verbose`, a version
    line with the commit, and the task namespace imported only when a task or listing needs it."""

    def __init__(self, namespace_factory: Callable[[], Collection], **kwargs: Any):
        self._namespace_factory, self._namespace = namespace_factory, None
        super().__init__(**kwargs)

    @property
    def namespace(self) -> Collection:  # type: ignore[override]
        if self._namespace is None:
            self._namespace = self._namespace_factory()
        return self._namespace

    @namespace.setter
    def namespace(self, value: Collection | None) -> None:
        self._namespace = value

    def core_args(self) -> list[Argument]:
        kept = [arg for arg in super().core_args() if arg.name in _KEPT_CORE]
        return kept + [
            Argument(names=("config",), help="a settings file read after all others (YAML or JSON)"),
            Argument(names=("quiet", "q"), kind=bool, default=False,
                     help="no phase lines on stderr (errors and warnings are still printed)"),
            Argument(names=("verbose", "v"), kind=bool, default=False,
                     help="also name the settings files read, before the phase lines"),
        ]

    @property
    def initial_context(self) -> ParserContext:  # type: ignore[override]
        return ParserContext(args=self.core_args())  # never a loader's --collection / --search-root

    def print_help(self) -> None:
        super().print_help()
        print("Help on a task: scheduler-build help TASK; topics: scheduler-build help settings | settings-files | "
              "completion")

    def print_columns(self, tuples: Any) -> None:
        """Help texts and task summaries name `scheduler-build TASK`, not `inv TASK` (errors.for_program)."""
        super().print_columns([(name, errors.for_program(text) if text else text) for name, text in tuples])

    def print_version(self) -> None:
        print(about.version_line(self.name))

    def run(self, argv: list[str] | None = None, exit: bool = True) -> None:
        """Hints name `scheduler-build ...`, not `inv ...`, for this run (and only this one, in-process)."""
        previous, errors.PROGRAM[0] = errors.PROGRAM[0], self.binary
        try:
            super().run(argv, exit)
        finally:
            errors.PROGRAM[0] = previous

    def parse_collection(self) -> None:
        """`--list` and TAB completion are served from the cached listing when there is one."""
        if self._namespace is None and (self.args.list.value or self.args.complete.value) and not self.args.help.value:
            self._namespace = cli_listing.load()
        super().parse_collection()

    def parse_core(self, argv: list[str] | None) -> None:
        super().parse_core(argv)
        progress.set_verbosity(0 if self.args.quiet.value else 2 if self.args.verbose.value else 1)

    def update_config(self, merge: bool = True) -> None:
        """invoke's version reads the run-related flags this program does not have."""
        self.config.set_runtime_path(self.args.config.value)
        self.config.load_runtime(merge=False)
        if merge:
            self.config.merge()
        if progress.verbosity() >= 2:
            for level in ("system", "user", "project", "runtime"):
                if getattr(self.config, f"_{level}_found", None):
                    progress.log(f"settings: {getattr(self.config, f'_{level}_path')} ({level})")


def _namespace() -> Collection:
    """The product's tasks, plus `help` and `version` (scheduler-build only; `inv` has --help/--version)."""
    from scheduler_build import commands  # the heavy part of start-up: only when a task, --list or completion needs it
    from scheduler_build.commands import meta

    ns = commands.namespace()
    ns.add_task(meta.help_, name="help")
    ns.add_task(meta.version)
    cli_listing.save(ns)
    return ns


program = SchedulerBuildProgram(
    namespace_factory=_namespace,
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
