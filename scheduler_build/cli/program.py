"""The `scheduler-build` program: invoke's Program with the flags that mean something here."""

from __future__ import annotations

import gc
from typing import Any, Callable

from invoke import Argument, Collection, Program
from invoke.exceptions import ParseError
from invoke.parser import ParserContext

from scheduler_build import errors, progress
from scheduler_build.cli import about
from scheduler_build.cli import listing as cli_listing
from scheduler_build.cli.files import check_config_flag


def _described(real: Collection, listed: Collection, name: str) -> bool:
    """Whether the real task `name` has the arguments and parameters its listed description gave it."""
    data = listed[name].data
    return cli_listing.describe_task(data["name"], real[name], data["default"]) == data


_KEPT_CORE = ("complete", "debug", "help", "list", "list-depth", "list-format", "print-completion-script", "version",
              "write-pyc")


class SchedulerBuildProgram(Program):
    """invoke's Program with the flags that mean something here: no run-related core flags,
    `--config FILE` (no `-f`, which swallowed the task name), `-q/--quiet`, `-v/--verbose`, a version
    line with the commit, and the task modules imported only when needed: a command line is parsed with
    the cached listing (cli/listing.py) when there is one, then only the modules of the tasks it runs are
    imported (`runnable_factory`): `build` does not pay for the cluster's, the image's or the extender's."""

    def __init__(self, namespace_factory: Callable[[], Collection],
                 runnable_factory: Callable[[set[str]], Collection | None] = lambda names: None, **kwargs: Any):
        self._namespace_factory, self._runnable_factory, self._namespace = namespace_factory, runnable_factory, None
        self._listed = False
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
        """`--list`, TAB completion and a task's command line are served from the cached listing when there
        is one (the bare `--help` imports the tasks, as before)."""
        if self._namespace is None and not self.args.help.value:
            self._namespace = cli_listing.load()
            self._listed = self._namespace is not None
        super().parse_collection()

    def parse_tasks(self) -> None:
        """A command line the listing cannot parse is parsed again with the real tasks before it is called a
        mistake: only a listing that no longer describes them could refuse what they accept."""
        try:
            super().parse_tasks()
        except ParseError:
            if not self._listed:
                raise
            self._listed = False
            # Written anew from the real tasks before they are parsed (parsing consumes their help texts): the
            # same listing when the mistake is the user's, a true one when it was stale.
            cli_listing.forget()
            self._namespace = self.collection = self._namespace_factory()
            super().parse_tasks()  # the user's own mistake is refused here too, with the real tasks' words

    def execute(self) -> None:
        """The real tasks in place of the listed ones: only their modules imported when they can be alone."""
        if self._listed:
            self._listed = False
            self._namespace = self.collection = self._real_tasks()
        if not gc.isenabled():  # the console script's start-up (entry.py): its imports are done
            gc.freeze()  # what they made lives as long as the process: no collection walks it again, the exit's neither
            gc.enable()
        super().execute()

    def _real_tasks(self) -> Collection:
        """The namespace of the tasks to run: only theirs (`runnable_factory`), or every task when one needs the
        whole namespace (`help`, `version`). Their real arguments must be the ones the command line was parsed
        with; a listing that no longer describes them is removed, and the line parsed again with every task."""
        listed = self.collection
        real = self._runnable_factory({context.name.split(".")[0] for context in self.tasks}) or self._namespace_factory()
        if all(_described(real, listed, context.name) for context in self.tasks):
            return real
        cli_listing.forget()  # stale: the next run must not be served from it either
        self.collection = self._namespace_factory()  # which writes the listing anew
        self.parse_tasks()
        return self.collection

    def parse_core(self, argv: list[str] | None) -> None:
        super().parse_core(argv)
        self.core_flags_changed()

    def core_flags_changed(self) -> None:
        """-q / -v given (before the task name, or after it: cli/rewrite.py moves them)."""
        progress.set_verbosity(0 if self.args.quiet.value else 2 if self.args.verbose.value else 1)

    def update_config(self, merge: bool = True) -> None:
        """invoke's version reads the run-related flags this program does not have."""
        check_config_flag(self.args.config.value)
        self.config.set_runtime_path(self.args.config.value)
        self.config.load_runtime(merge=False)
        if merge:
            self.config.merge()
        if progress.verbosity() >= 2:
            for level in ("system", "user", "project", "runtime"):
                if getattr(self.config, f"_{level}_found", None):
                    progress.log(f"settings: {getattr(self.config, f'_{level}_path')} ({level})")
