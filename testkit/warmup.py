"""`inv test`'s warm-up: while the unit tiers run on one core, build on the other what the later tiers
would each build on first use: the oldest and newest Python's virtualenvs, then the Go tools the
integration, node and pipeline tiers call (etcd, helm, cosign, the judges, containerd, CoreDNS, act).

Each item is made by the very function its test calls, into the same cache entry, and each of those
takes turns on a lock (scheduler_build/filelock.py): a test that needs an item still being built waits
for it instead of building it again. A failure here is one logged line and nothing more: the test
that needs the item builds it itself and fails there, with its own message. The process runs at the
lowest CPU priority, so the tiers' own work comes first; `inv test` stops it when the run ends.

    python -m testkit.warmup        # what `inv test` starts in the background (a full run only)
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from scheduler_build import settings
from scheduler_build.golang import gotool

REPO = Path(__file__).resolve().parents[1]


def _pythons() -> None:
    from testkit import pythons

    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    # Both at once: each is one pip mostly waiting on downloads and disk.
    with ThreadPoolExecutor(max_workers=2) as pool:
        made = [pool.submit(pythons.venv, minor, settings.cache_dir(), _say)
                for minor in pythons.ends() if minor != running]
    for future in made:
        future.result()  # raises the first failure


def _etcd() -> None:
    from testkit import etcd
    from testkit import versions

    etcd.binary(gotool.module_dir("k8s.io/kubernetes", versions.current().default), settings.cache_dir())


# The tools, in the order the tiers first need them (integration: bench.perf's etcd is its first test,
# the chart tests' helm and cosign come next; then the node's; then the pipelines'): what, and the
# function its test calls to build it, as module:function. The product's take the cache directory,
# the tests' judges (testkit.*) nothing.
TOOLS = [
    ("helm", "scheduler_build.config.chart:helm"),
    ("cosign", "scheduler_build.publish.cosign:binary"),
    ("kube-score", "scheduler_build.config.linters:binary"),
    ("kubeconform", "scheduler_build.config.schemas:kubeconform"),
    ("cyclonedx-gomod", "testkit.judges:cyclonedx_gomod"),
    ("intoto-validate", "testkit.judges:intoto_validate"),
    ("apidiff", "scheduler_build.retarget.apidiff:tool"),
    ("containerd", "scheduler_build.cluster.containerd:build"),
    ("CoreDNS", "scheduler_build.cluster.dns:binary"),
    ("act", "testkit.act_runner:act_binary"),
]


def builder(target: str) -> Callable[[], None]:
    """`module:function` as a call: with the cache directory for the product's, with nothing for testkit's."""
    module, function = target.split(":")
    takes_cache = not module.startswith("testkit.")
    return lambda: getattr(importlib.import_module(module), function)(*((settings.cache_dir(),) if takes_cache else ()))


ITEMS: list[tuple[str, Callable[[], None]]] = [
    ("the oldest and newest Python's virtualenvs", _pythons),  # the unit-pythons tier (beside the node tier)
    ("etcd", _etcd),
    *((what, builder(target)) for what, target in TOOLS),
]


def _say(line: str) -> None:
    print(f"warm-up: {line}", file=sys.stderr, flush=True)


@contextmanager
def running(log_path: Path) -> Iterator[None]:
    """The warm-up in the background while the block runs, its output in `log_path`; when the block ends
    (a tier failed, Ctrl-C, or the run is over) it and every `go` it started are stopped."""
    with open(log_path, "ab") as log:
        # Its own session: a process group (stopped with its children) and, under the kernel's autogroup
        # scheduling, a group of its own, whose priority main() lowers (lowest_priority).
        proc = subprocess.Popen([sys.executable, "-m", "testkit.warmup"], cwd=REPO, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to its process group (each build removes its staging directory), then SIGKILL to what is
    left of the group after 30 s (a `go` child its leader left behind). Returns once no process of the
    group runs: a signal is only sent by kill(), and a child at nice 19 on a busy machine may take a
    while to act on it (a CI run saw the warm-up's child still there right after the leader's exit)."""
    for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        while group_running(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not group_running(proc.pid):
            break
    proc.wait()


def group_running(pgid: int) -> bool:
    """Whether a process of the group still runs; a zombie does not (its parent, init here, reaps it)."""
    try:
        entries = [e for e in Path("/proc").iterdir() if e.name.isdigit()]
    except OSError:  # no /proc: ask the kernel, which counts a zombie as running
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in entries:
        try:
            state, _ppid, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # it ended while being read
        if int(group) == pgid and state != "Z":
            return True
    return False


def lowest_priority() -> None:
    """Take only CPU time nothing else wants, the compile containers' included. A nice value alone does not
    do it: it weighs a process against others of its scheduling group only, and the engine's containers
    run in a cgroup of their own, while the kernel's autogroup scheduling makes each session a group
    (weighted as nice 0 until told otherwise). So: nice 19, and the session's autogroup at nice 19 too
    (a measured cold run with nice alone: the compile tests the warm-up overlapped took half as long again)."""
    os.nice(19)
    try:
        Path("/proc/self/autogroup").write_text("19")
    except OSError:
        pass  # no autogroup scheduling here (sched_autogroup_enabled=0, or another kernel): nice 19 is enough


def main() -> int:
    lowest_priority()  # the tiers' own work first: this only takes what they leave idle
    # SIGTERM (the run ended) unwinds like Ctrl-C, so each build's staging directory is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for what, build in ITEMS:
        started = time.monotonic()
        try:
            build()
        except Exception as exc:  # noqa: BLE001  best effort: the test that needs it builds it and reports
            _say(f"{what}: not built ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                 "the test that needs it builds it")
            continue
        _say(f"{what}: ready in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
