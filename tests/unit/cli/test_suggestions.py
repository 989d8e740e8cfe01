"""Unit: invoke's parse errors become one `error:` line with a "did you mean" (the real Program and
namespace, in process; tests/integration/test_input_errors.py runs the same through `inv` and `scheduler-build`)."""

from __future__ import annotations

import pytest
from invoke import Program

from scheduler_build.cli.app import add_suggestions
from scheduler_build.commands import namespace


@pytest.mark.parametrize("argv, line", [
    (["clen"], "error: unknown task 'clen'; did you mean 'clean'? (`sb --list` lists the tasks)"),
    (["k8s.resolv", "1.36"], "error: unknown task 'k8s.resolv'; did you mean 'k8s.resolve'?"),
    (["config.validate", "--feilds-only"], "error: unknown flag --feilds-only for config.validate; did you mean '--fields-only'?"),
    (["deploy", "--no-wiat"], "did you mean '--no-wait'?"),
    (["--help", "clen"], "did you mean 'clean'?"),
    (["nothing-like-it"], "error: unknown task 'nothing-like-it'; `sb --list` lists the tasks"),
    (["deploy", "--timeout"], "error: Flag --timeout needed value and was not given one!"),
])
def test_parse_errors_are_one_line(capsys, argv, line):
    program = Program(namespace=namespace(), name="sb", binary="sb")
    add_suggestions(program)
    add_suggestions(program)  # idempotent: tasks.py may be loaded twice (from a subdirectory)
    with pytest.raises(SystemExit) as exited:
        program.run(["sb", *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and line in err[0], err
