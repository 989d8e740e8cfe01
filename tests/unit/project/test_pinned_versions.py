"""The suite pins what it tests (tests/versions.yaml, testkit/versions.py): its versions come from the
file, the resolve stage sees the pinned listings during the suite, and a proxy that serves more (a new patch,
a new minor) changes nothing the suite builds, while the canary's comparison reports it."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, TEST_K8S_MINOR, TEST_K8S_VERSION, VERSIONS
from scheduler_build.resolve import goproxy, versions
from testkit import minors
from testkit import versions as pinned

NEWER = ["v1.36.6", "v1.38.0", "v1.38.0-rc.1"]  # what a release day adds: a patch, a minor, a pre-release


def test_the_suites_versions_are_the_pinned_files():
    doc = pinned.load()
    assert (TEST_K8S_VERSION, TEST_K8S_MINOR) == (doc.default, versions.minor_of(doc.default))
    assert minors.served() == doc.served and VERSIONS == doc
    # the file is consistent: its served minors and default are what its own listing gives
    assert pinned.from_listings(doc.listings, doc.default_minor) == doc


def test_the_resolve_stage_lists_the_pinned_listings_during_the_suite():
    """The pinned listings are in front of GOPROXY: the product's own listing call returns them."""
    assert os.environ["GOPROXY"].startswith("file://")
    for module in pinned.LISTED:
        assert goproxy.list_versions(module) == VERSIONS.listings[module]


def test_a_proxy_serving_more_changes_nothing_the_suite_builds_and_the_canary_says_what_is_new(tmp_path):
    doc, session_proxy = pinned.load(), os.environ["GOPROXY"]
    grown = {**doc.listings, versions.KUBERNETES_MODULE: doc.listings[versions.KUBERNETES_MODULE] + NEWER}
    now = pinned.from_listings(grown, doc.default_minor)
    assert now.served != doc.served and now.default == "v1.36.6"  # negative control: the live view moved
    assert set(pinned.changes(doc, now)) >= {"new minor 1.38: v1.38.0", "new patch of 1.36: v1.36.6 (pinned v1.36.3)",
                                             f"minor {list(doc.served)[0]} is no longer served (pinned "
                                             f"{list(doc.served.values())[0]})", "default: v1.36.6 (pinned v1.36.3)"}
    assert pinned.changes(doc, doc) == []
    # the proxy grows behind the pinned front: a fresh process (as every `inv` the tests start) resolving the
    # default minor still gets the pinned release; without the front it gets the new patch (negative control)
    behind = tmp_path / "grown"
    upstream = pinned.serve_listings(pinned.Versions(doc.default, doc.served, grown), behind)
    # the go command reads the newest listed version's go.mod for retractions: the synthetic v1.38.0 has one
    for kind, text in (("info", '{"Version":"v1.38.0","Time":"2026-12-16T00:00:00Z"}'),
                       ("mod", "module k8s.io/kubernetes\n\ngo 1.27\n")):
        (behind / "k8s.io" / "kubernetes" / "@v" / f"v1.38.0.{kind}").write_text(text)
    os.environ["GOPROXY"] = session_proxy  # serve_listings set it for this process: put the session's back
    assert choose_in_a_fresh_process(upstream, None) == "v1.36.6"
    assert choose_in_a_fresh_process(upstream, tmp_path / "front") == doc.default


def choose_in_a_fresh_process(proxy: str, front) -> str:
    """The release the resolve stage chooses for the default minor from the listing GOPROXY gives a new process,
    with the pinned front put in place first when `front` is a directory."""
    code = ("import pathlib, sys; from testkit import versions as v; from scheduler_build.resolve import goproxy, versions as r\n"
            "if sys.argv[1]: v.serve_listings(v.load(), pathlib.Path(sys.argv[1]))\n"
            f"print(r.choose(r.parse_request({TEST_K8S_MINOR!r}), goproxy.list_versions(r.KUBERNETES_MODULE)))")
    # GONOSUMDB: the synthetic release is in no checksum database
    env = dict(os.environ, GOPROXY=proxy, GONOSUMDB="k8s.io/kubernetes", PYTHONPATH=f"{REPO}:{REPO / 'tests'}")
    got = subprocess.run([sys.executable, "-c", code, str(front or "")], cwd=REPO, capture_output=True, text=True,
                         env=env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    return got.stdout.strip()


def test_the_canary_compares_against_the_live_proxy_only_when_asked(monkeypatch):
    monkeypatch.delenv(pinned.CANARY_ENV, raising=False)
    assert not pinned.canary()
    for value, on in (("1", True), ("0", False), ("", False)):
        monkeypatch.setenv(pinned.CANARY_ENV, value)
        assert pinned.canary() is on
