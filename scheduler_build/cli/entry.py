"""The console script `scheduler-build`: nothing but the standard library before main() runs,
so Ctrl-C, SIGTERM or SIGHUP at any moment of start-up (imports included) is one line, not a
traceback (signals.py: the two others take Ctrl-C's path)."""

import gc
import sys

from scheduler_build import signals


def main() -> None:
    signals.install()
    # Start-up makes no garbage worth collecting, only objects that live as long as the process (modules,
    # classes, functions): collections while importing walk them again and again (about a fifth of the
    # start-up's CPU). program.execute freezes them and turns collection back on before a task runs.
    gc.disable()
    try:
        from scheduler_build.cli import app as cli  # noqa: PLC0415 - inside the handler on purpose: start-up is interruptible

        cli.main()
    except KeyboardInterrupt as exc:
        sys.exit(signals.report(exc, kept=""))
