"""The console script `scheduler-build`: nothing but the standard library before main() runs,
so Ctrl-C, SIGTERM or SIGHUP at any moment of start-up (imports included) is one line, not a
traceback (signals.py: the two others take Ctrl-C's path)."""

import sys

from scheduler_build import signals


def main() -> None:
    signals.install()
    try:
        from scheduler_build.cli import app as cli  # noqa: PLC0415 - inside the handler on purpose: start-up is interruptible

        cli.main()
    except KeyboardInterrupt as exc:
        sys.exit(signals.report(exc, kept=""))
