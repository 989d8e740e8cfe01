"""The console script `scheduler-build`: nothing but the standard library before main() runs,
so Ctrl-C at any moment of start-up (imports included) is one line, not a traceback."""

import sys


def main() -> None:
    try:
        from scheduler_build import cli  # noqa: PLC0415 - inside the handler on purpose: start-up is interruptible

        cli.main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
