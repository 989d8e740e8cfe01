"""`inv plugin.retarget` on scaffolds, across served minors (integration; issue 23 parts 3 and 4).

- Carryable: the scaffold of the oldest served minor whose framework layout the newest minor still
  has (from 1.35: the types live in k8s.io/kube-scheduler/framework), with extension points whose
  signatures did not change since, is retargeted to the newest served minor with --write. The exit
  status is 0, go.mod and go.sum are written, and the written module compiles and vets in the builder
  the way the build stage compiles (testkit/minors.py), an independent check of retarget's own compile.
- Not carryable: the scaffold of the oldest served minor (1.34's Handle/Plugin still in
  k8s.io/kubernetes, which kept no aliases after 1.35 moved them). The exit status is 1, nothing is
  written, and the report says why: it names the moves.

Cold cost: the newest minor's packages compiled by retarget's compile (module cache, not vendored,
so not shared with the build stage's cache), once for both tests; apidiff (built once per version into
<cache>/tools) and the export data of the old framework package. The independent compile shares the
Go build cache with tests/integration/test_served_minors.py.
"""

from __future__ import annotations

import json

import pytest

from scheduler_build import settings
from scheduler_build.resolve import framework_surface, gomod
from scheduler_build.scaffold import generate
from testkit import minors


# Extension points whose Go signatures are the same from 1.35 on (PreBindPreFlight changed in 1.36,
# QueueSort's Less in 1.37: read from each release's framework, resolve.framework_surface).
STABLE_POINTS = "prefilter,filter,score,reserve,permit,postbind"


@pytest.fixture(scope="module")
def served() -> dict[str, str]:
    return minors.served()


def split(version: str) -> bool:
    """Whether the release's plugin interfaces still live in k8s.io/kubernetes (read from its framework source)."""
    return generate.framework_api(framework_surface.framework_surface(version, settings.cache_dir())).split


def retarget(path, version, *extra):
    return minors.inv("plugin.retarget", "--path", str(path), "--k8s-version", version, "--json", *extra)


def test_a_scaffold_retargeted_to_the_newest_minor_with_write_compiles(served, tmp_path):
    newest = list(served)[-1]
    oldest = next(minor for minor in served if not split(served[minor]))
    assert oldest != newest, served
    module = minors.scaffold(served[oldest], tmp_path / "plugin", points=STABLE_POINTS)
    got = retarget(module, served[newest], "--write")
    assert got.returncode == 0, got.stderr[-4000:]
    result = json.loads(got.stdout)
    assert result["compiles"] is True and result["from"] == served[oldest] and result["to"] == served[newest]
    # go.mod and go.sum, and the scaffold's generated Handle fake when the target's Handle differs
    fake = next(module.rglob("handle_fake_test.go")).relative_to(module).as_posix()
    assert sorted(result["written"]) in (["go.mod", "go.sum"], sorted(["go.mod", "go.sum", fake])), result["written"]
    assert "from the Handle interface of Kubernetes " + newest in (module / fake).read_text()
    written = gomod.parse((module / "go.mod").read_text())
    assert written.requires["k8s.io/kubernetes"] == served[newest]
    assert written.replaces["k8s.io/kube-scheduler"] == ("k8s.io/kube-scheduler", "v0." + served[newest][3:])
    [compiled] = minors.compile_and_vet({f"{oldest} scaffold retargeted to {newest}": module}).values()
    assert compiled.ok, "\n".join(compiled.lines[-30:])


def test_the_oldest_scaffold_is_not_carried_to_the_newest_minor_and_the_report_says_why(served, tmp_path):
    oldest, newest = list(served)[0], list(served)[-1]
    if not split(served[oldest]):
        pytest.skip(f"the oldest served minor {oldest} has the newest framework layout: every scaffold carries")
    module = minors.scaffold(served[oldest], tmp_path / "plugin", points="filter,score")
    before = (module / "go.mod").read_text()
    got = retarget(module, served[newest])
    assert got.returncode == 1, got.stderr[-4000:]
    assert (module / "go.mod").read_text() == before  # without --write nothing changes
    result = json.loads(got.stdout)
    assert result["compiles"] is False and result["errors"], got.stderr[-4000:]
    changes = "\n".join(result["changes"])
    for name in ("Handle", "Plugin"):
        assert f"framework.{name} -> k8s.io/kube-scheduler/framework.{name}" in changes, changes
