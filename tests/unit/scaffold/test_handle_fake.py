"""scaffold/handle_fake: the tests' fake Handle is the release's own Handle method set (read from the real
frameworks of v1.37.2 and v0.38.0-beta.0: module downloads, cached per run), with the imports it spells."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from scheduler_build.resolve import framework_surface
from scheduler_build.scaffold import handle_fake

_CACHE = Path(tempfile.mkdtemp(prefix="sb-test-fake-"))
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture(scope="module")
def surfaces():
    return (framework_surface.framework_surface("v1.37.2", _CACHE),
            framework_surface.framework_surface("v1.38.0-beta.0", _CACHE))


def test_the_fake_follows_the_release_handle_with_no_list_of_methods(surfaces):
    old, new = (handle_fake.render_file(s, "gang", "1.x") for s in surfaces)
    assert "func (fakeHandle) NominatedPodsForNode(string) []fwk.PodInfo {" in old
    assert "PreemptionManager" not in old  # the negative control: 1.37's Handle has none
    assert "func (fakeHandle) NominatedPodsForNode(klog.Logger, string) []fwk.PodInfo {" in new
    assert "func (fakeHandle) SharedPodGroupHierarchyTracker() fwk.PodGroupHierarchyTracker {" in new
    assert "func (fakeHandle) PreemptionManager() fwk.PreemptionManager {" in new
    for surface, text in zip(surfaces, (old, new)):
        names = {sig.split("(", 1)[0] for sig in surface.method_set("Handle")}
        assert {line.split(") ", 1)[1].split("(", 1)[0] for line in text.splitlines()
                if line.startswith("func (fakeHandle)")} == names
        assert 'clientset "k8s.io/client-go/kubernetes"' in text and 'v1 "k8s.io/api/core/v1"' in text
        formatted = subprocess.run(["gofmt"], input=text, capture_output=True, text=True)
        assert formatted.returncode == 0 and formatted.stdout == text, formatted.stderr  # parses, gofmt'd as is
