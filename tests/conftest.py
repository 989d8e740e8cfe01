"""Shared fixtures, and the one rule that marks a test by its directory.

Integration fixtures use the real Docker engine and Go toolchain, and the default
content-addressed caches (~/.cache/scheduler-build, the Go build cache volume), so the
whole suite compiles each distinct input once."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

import pytest

from testkit import versions as _versions

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
# The Kubernetes release the integration tests build: pinned in tests/versions.yaml (the canary: the live
# proxy's). The pinned proxy listings go in front of GOPROXY for the whole session, so the minor resolves to
# that same release here and in every `inv` the tests start, and no upstream release changes it.
VERSIONS = _versions.current()
TEST_K8S_VERSION = VERSIONS.default
TEST_K8S_MINOR = VERSIONS.default_minor
if not _versions.canary():
    _versions.serve_listings(VERSIONS)

# A test's tier is the directory it lives in (docs/development.md): unit/ carries no mark,
# so the unit selection is `not integration and not e2e and not node`. node/ is also e2e,
# so that `-m "not e2e"` never starts a node either.
TIER_MARKS = {"integration": ("integration",), "e2e": ("e2e",), "node": ("node", "e2e")}


UNPROVEN_ENV = "SCHEDULER_BUILD_TEST_UNPROVEN"
# Read once and taken out of the environment: `scheduler-build` refuses every SCHEDULER_BUILD_* variable that
# is not a setting, so a run under test that inherited it failed with "not a setting" before doing anything.
RUN_UNPROVEN = os.environ.pop(UNPROVEN_ENV, None) == "1"


def unproven(why: str) -> pytest.MarkDecorator:
    """A test written but not yet seen passing on a CI machine: skipped (with `why`, shown by `-ra`) unless
    SCHEDULER_BUILD_TEST_UNPROVEN=1. docs/development.md lists each, so none stays unrun by accident."""
    return pytest.mark.skipif(not RUN_UNPROVEN, reason=f"unproven ({UNPROVEN_ENV}=1 runs it): {why}")


def tier_marks(path: Path, tests_dir: Path = Path(__file__).resolve().parent) -> tuple[str, ...]:
    """The marks a test file gets from its directory under tests/ (none outside the tier dirs)."""
    try:
        parts = Path(path).resolve().relative_to(tests_dir).parts
    except ValueError:
        return ()
    return TIER_MARKS.get(parts[0], ()) if len(parts) > 1 else ()


@pytest.hookimpl(tryfirst=True)  # before the -m selection reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in tier_marks(item.path):
            item.add_marker(mark)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


def build_request(dist: Path, **overrides):
    from scheduler_build.inputs.build import default_request

    fields = dict(k8s_version=TEST_K8S_MINOR, dist_dir=dist, pull=False)
    fields.update(overrides)
    return default_request(**fields)


@pytest.fixture(scope="session")
def built_scheduler(tmp_path_factory):
    """One real kube-scheduler build (native arch) shared by every integration test.

    Returns scheduler_build.build.pipeline.BuildResult: .binary, .build_info, .info.
    """
    from scheduler_build.build import pipeline as build

    dist = tmp_path_factory.mktemp("dist")
    return build.run(build_request(dist))


@pytest.fixture(scope="session")
def built_example_scheduler(tmp_path_factory):
    """`inv build --spec examples/underlay/scheduler.yaml` (UnderlayIPLimit plugin + the example
    patch), run once through the CLI and shared: the only patched build of the suite.

    Returns scheduler_build.build.pipeline.BuildResult: .binary, .build_info, .info.
    """
    import json
    import subprocess
    import sys

    from scheduler_build.build.info import BuildInfo
    from scheduler_build.build.pipeline import BuildResult

    dist = tmp_path_factory.mktemp("example-dist")
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "build", "--spec", str(REPO / "examples/underlay/scheduler.yaml"),
         "--dist", str(dist), "--no-pull", "--json"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    info = json.loads(done.stdout)
    binary = Path(info["binary"]["path"])
    return BuildResult(binary=binary, build_info=binary.parent / "build-info.json", info=BuildInfo.from_dict(info))


@pytest.fixture(scope="session")
def served_scaffolds(tmp_path_factory):
    """Every served minor's all-points scaffold (`inv scaffold.plugin --json`), a planted fault and the example
    plugin, compiled, vetted and tested in ONE builder container (testkit/minors.py compile_served), once per
    session: tests/integration/test_plugin_build.py and test_served_minors.py read it, nothing compiles them
    on the host.

    Returns testkit.minors.ServedRun: .scaffolds (minor -> path and JSON), .results (label -> Compiled), .planted.
    """
    from testkit import minors

    return minors.compile_served(tmp_path_factory.mktemp("served-minors"), TEST_K8S_MINOR)


# `inv test` keeps every test's duration per tier (--durations-file), beside its JUnit XML.
_DURATIONS: dict[str, float] = {}


def pytest_addoption(parser) -> None:
    parser.addoption("--durations-file", default="", help="write every test's duration (s, slowest first) here")


def pytest_runtest_logreport(report) -> None:
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session) -> None:
    path = session.config.getoption("--durations-file")
    if path:
        rows = sorted(_DURATIONS.items(), key=lambda item: -item[1])
        Path(path).write_text("".join(f"{seconds:9.2f}  {nodeid}\n" for nodeid, seconds in rows))


BUILDER_LABEL = "io.scheduler-build.builder=1"  # build/warm.py's LABEL (not imported: unit runs stay light)


@pytest.fixture(scope="session", autouse=True)
def remove_the_builders_this_session_starts(tmp_path_factory):
    """On an engine on this machine the builds use long-lived builders (build/warm.py), one per cache
    directory, and tests give builds their own cache directories: the builders of this session's
    cache directories (their /out under its base temporary directory) are its to remove. Those of the
    shared cache directory, and every other session's on the same engine (started while this one ran),
    stay: their idle timeout ends them. No engine: nothing to do."""
    try:
        import docker

        client = docker.from_env(version="auto", timeout=10)
        before = {c.id for c in client.containers.list(all=True, filters={"label": BUILDER_LABEL})}
    except Exception:  # noqa: BLE001 - no engine here (a unit run): no builder can start either
        yield
        return
    yield
    mine = str(tmp_path_factory.getbasetemp().resolve()) + os.sep
    try:
        for container in client.containers.list(all=True, filters={"label": BUILDER_LABEL}):
            out = (container.labels or {}).get("io.scheduler-build.shared-out", "")
            if container.id not in before and out.startswith(mine):
                with _builder_lock(container):  # never under a compile: another session's may use it
                    container.remove(force=True)
    except Exception:  # noqa: BLE001 - the engine went away (the remote-engine tier stops its own)
        pass


@contextlib.contextmanager
def _builder_lock(container):
    """The lock its builds take (build/compile.output_lock: <state dir>/<name>.lock), found through the
    /out directory it was given (<state dir>/builders/<name>-<random>, its label); none when unlabelled."""
    out = (container.labels or {}).get("io.scheduler-build.shared-out")
    lock = Path(out).parent.parent / f"{container.name}.lock" if out else None
    if lock is None or not lock.is_file():
        yield
        return
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield
