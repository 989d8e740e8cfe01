"""`scheduler-build help [TOPIC|TASK]` and `scheduler-build version`: what kubectl, helm and ko users type.

Added by scheduler_build.cli to scheduler-build's namespace only (`inv` has --help and --version).
Topics are documentation a pip user has without a checkout: hints name them (`scheduler-build help settings`).
"""

from __future__ import annotations

import difflib

from typing import Any

from invoke import Task, task

from scheduler_build import settings
from scheduler_build.cli import about
from scheduler_build.errors import UserError
from scheduler_build.commands._common import emit, user_errors

COMPLETION = """Shell completion for scheduler-build (task names, then each task's flags):

  bash:  source <(scheduler-build --print-completion-script bash)     # e.g. in ~/.bashrc
  zsh:   source <(scheduler-build --print-completion-script zsh)      # e.g. in ~/.zshrc
  fish:  scheduler-build --print-completion-script fish | source      # e.g. in ~/.config/fish/config.fish

The script calls `scheduler-build --complete` on each TAB; it imports no build code."""

FILES = f"""Every value: flag, then the build spec, then environment variable, then settings file, then default.

  scheduler-build.yaml   the project's file: the nearest one at or above the working directory
  ~/.scheduler-build.yaml, /etc/scheduler-build.yaml   the user's and the machine's
  --config FILE          read after all of them
  SCHEDULER_BUILD_<SECTION>_<KEY>   environment variables, e.g. SCHEDULER_BUILD_PUSH_INSECURE=false

A file holds sections of keys, e.g.

  k8s:
    version: "{settings.default('k8s.version')}"
  spec:
    path: scheduler.yaml

Booleans: true/false, yes/no, on/off, 1/0; every boolean flag has its --no-X (or --X for a --no-X flag).
A project's invoke.yaml is still read where no scheduler-build.yaml is found (deprecated).
Every key: `scheduler-build help settings`."""


def _settings_table() -> str:
    """Every setting: key, default, flag and variable, then what it means (which tells spec.path from its
    deprecated aliases buildspec.path and config.spec)."""
    rows = [("key", "default", "flag", "environment variable")]
    rows += [(row.key, settings.shown_plain(row.default), row.flag_name or "-", settings.env_vars(row.key)[1])
             for row in settings.SETTINGS]
    width = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for i, (key, default, flag, var) in enumerate(rows):
        lines.append(f"{key:<{width[0]}}  {default:<{width[1]}}  {flag:<{width[2]}}  {var}")
        if i:
            lines.append(f"    {settings.SETTINGS[i - 1].help}")
    return "\n".join(lines)


TOPICS = {
    "settings": _settings_table,
    "settings-files": lambda: FILES,
    "completion": lambda: COMPLETION,
}


def help_task(program: Any) -> Task:
    """The `help` task of `program` (scheduler_build.cli passes its own: this module imports no front door)."""

    @task(name="help", positional=["topic"],
          help={"topic": f"a task (e.g. build) or a topic: {', '.join(TOPICS)}"})
    @user_errors
    def help_(c, topic):
        """Show help: the tasks (no TOPIC), one task's flags, or a topic (settings, settings-files, completion)."""
        if topic in TOPICS:
            emit(TOPICS[topic]())
            return
        names = [alias for name, aliases in program.collection.task_names.items() for alias in (name, *aliases)]
        if topic in names:
            program.print_task_help(topic)
            return
        close = difflib.get_close_matches(topic, [*TOPICS, *names], n=1)
        raise UserError(f"help: no task or topic {topic!r}",
                        f"did you mean {close[0]!r}?" if close else f"topics: {', '.join(TOPICS)}; tasks: scheduler-build --list")

    return help_


@task
def version(c):
    """Print the version, the commit it was built from and the Python running it."""
    emit(about.version_line("scheduler-build"))
