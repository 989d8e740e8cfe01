"""progress.alive: the heartbeat of a long step speaks only into a silence of `every` seconds, keeps
speaking while the silence lasts, and never under -q. No timing bound is asserted beyond what holds on
a loaded machine: the gap before every heartbeat is at least `every` (the beat's own rule), and the
beats are awaited with a generous deadline. Negative control: a beat that does not count as a line
(`_say` not updating `_LAST`) repeats every poll and fails the gap check."""

from __future__ import annotations

import contextlib
import time

from scheduler_build import progress


class Stamped:
    """stderr that keeps when each line was written (monotonic seconds) and the line."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []
        self._partial = ""

    def write(self, text: str) -> int:
        *whole, self._partial = (self._partial + text).split("\n")
        self.lines += [(time.monotonic(), line) for line in whole]
        return len(text)

    def flush(self) -> None:
        pass


@contextlib.contextmanager
def stamped(level: int = 1):
    """Entered in the test's body: pytest's capture puts its own sys.stderr back after a fixture's setup."""
    out, before = Stamped(), progress.verbosity()
    progress.set_verbosity(level)
    try:
        with contextlib.redirect_stderr(out):
            yield out
    finally:
        progress.set_verbosity(before)


def _beats(out: Stamped) -> list[float]:
    return [at for at, line in out.lines if line.startswith("    compile: ")]


def test_the_heartbeat_fires_after_silence_and_keeps_firing():
    every = 0.3
    with stamped() as out, progress.alive("compile", every=every):
        progress.log("==> compile")  # a line: the silence starts here
        deadline = time.monotonic() + 60
        while len(_beats(out)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(_beats(out)) >= 3, out.lines
    assert all(line.endswith(" elapsed") for at, line in out.lines[1:])
    for (before, _), (at, line) in zip(out.lines, out.lines[1:]):
        assert at - before >= every, f"{line!r} came {at - before:.3f}s after the line before it"


def test_a_line_of_output_restarts_the_silence():
    every = 0.3
    with stamped() as out, progress.alive("compile", every=every):
        deadline = time.monotonic() + 60
        while not _beats(out) and time.monotonic() < deadline:
            time.sleep(0.05)
        progress.stream_line("k8s.io/kubernetes/cmd/kube-scheduler")  # the tool spoke
        while len(_beats(out)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    spoke = next(at for at, line in out.lines if line.startswith("k8s.io/"))
    after = [at for at in _beats(out) if at > spoke]
    assert after and after[0] - spoke >= every, out.lines


def test_no_heartbeat_under_quiet():
    with stamped(level=0) as out, progress.alive("compile", every=0.05):
        time.sleep(0.5)  # ten silences long: a beat would have spoken several times
    assert out.lines == []


def test_a_step_that_failed_without_raising_is_said_as_failed():
    with stamped() as out:
        with progress.phase("compile", "x") as step:
            step["failed"] = True
        with progress.phase("vet"):
            pass
    lines = [line for _, line in out.lines]
    assert lines[1].startswith("<== compile FAILED (") and lines[3].startswith("<== vet ok (")
