"""toolchain.py: which Go runs a build (unit; the real `go` for `go env`, no network: GOPROXY=off).

A toolchain module is faked in a module cache of the test's own (the layout Go leaves: the unpacked
GOROOT with an executable bin/go, and the .ziphash beside the download), so `choose` can be checked
offline: a go line the host satisfies keeps the host's Go, a newer one takes the newest cached patch
of its minor, and with none cached the error is one line naming the Go and both fixes.
"""

from __future__ import annotations

import pytest

from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.build import workspace_image
from scheduler_build.errors import UserError


@pytest.fixture
def modcache(tmp_path, monkeypatch):
    monkeypatch.setenv("GOMODCACHE", str(tmp_path))
    monkeypatch.setenv("GOPROXY", "off")
    return tmp_path


def fake_toolchain(cache, version: str, executable: bool = True) -> None:
    name = toolchain.module_version(version)
    go = cache / f"{toolchain.MODULE}@{name}" / "bin" / "go"
    go.parent.mkdir(parents=True)
    go.write_text("#!/bin/sh\n")
    go.chmod(0o755 if executable else 0o644)
    download = cache / "cache" / "download" / toolchain.MODULE / "@v"
    download.mkdir(parents=True, exist_ok=True)
    (download / f"{name}.ziphash").write_text(f"h1:{version}=\n")


def test_versions_compare_as_go_does():
    assert toolchain.parse("go1.27.3") == (1, 27, 3) and toolchain.parse("1.27") == (1, 27, 0)
    assert toolchain.satisfies("1.27.3", "1.27") and toolchain.satisfies("1.27.0", "1.27.0")
    assert not toolchain.satisfies("1.26.8", "1.27") and not toolchain.satisfies("", "1.20")
    assert toolchain.module_version("1.27.3", "arm64") == "v0.0.1-go1.27.3.linux-arm64"


def test_go_must_be_an_exact_release():
    assert toolchain.check_exact("go1.27.3") == "1.27.3"
    for bad in ("1.27", "latest", "1.27.3rc1", ""):
        with pytest.raises(UserError, match="not an exact Go release"):
            toolchain.check_exact(bad)


def test_a_go_line_the_host_satisfies_keeps_the_hosts_go(modcache):
    chosen = toolchain.choose("1.20")
    assert chosen.source == "host" and chosen.go == "" and chosen.identity == ""
    assert chosen.version == toolchain.host().version


def test_a_newer_go_line_takes_the_newest_cached_patch_of_its_minor(modcache):
    host = toolchain.parse(toolchain.host().version)
    minor = f"{host[0]}.{host[1] + 1}"
    for patch in ("1", "3", "2"):
        fake_toolchain(modcache, f"{minor}.{patch}")
    fake_toolchain(modcache, f"{minor}.9", executable=False)  # not unpacked by Go: not ready
    chosen = toolchain.choose(f"{minor}.0")
    assert (chosen.version, chosen.source) == (f"{minor}.3", "proxy")
    assert chosen.go == str(modcache / f"{toolchain.MODULE}@{toolchain.module_version(f'{minor}.3')}" / "bin" / "go")
    assert chosen.identity == f"{toolchain.MODULE}@{toolchain.module_version(f'{minor}.3')} h1:{minor}.3="
    assert toolchain.choose("1.20", exact=f"{minor}.2").version == f"{minor}.2"  # --go: that patch exactly


def test_offline_with_no_suitable_go_is_one_line_with_both_fixes(modcache):
    host = toolchain.parse(toolchain.host().version)
    minor = f"{host[0]}.{host[1] + 1}"
    with pytest.raises(UserError) as caught:
        toolchain.choose(f"{minor}.0", what="Kubernetes v9.9.9")
    text = str(caught.value)
    assert "\n" not in text and f"go {minor}.0 Kubernetes v9.9.9 requires" in text and "GOPROXY=off" in text
    assert f"install Go {minor}.0 or newer" in text and "set GOPROXY" in text


def test_go_older_than_the_go_line_is_refused(modcache):
    with pytest.raises(UserError, match="--go 1.20.1 is older than the go 1.21 this Kubernetes version requires"):
        toolchain.choose("1.21", exact="1.20.1")


def test_served_minor_needs_say_which_go_and_whether_it_is_at_hand():
    assert toolchain.need_line("1.37", "1.26.0", "1.26.8", []) == "1.37: go 1.26.0 (the host's go1.26.8)"
    assert "go1.27.4 cached" in toolchain.need_line("1.38", "1.27.0", "1.26.8", ["1.27.2", "1.27.4"])
    assert "not cached" in toolchain.need_line("1.38", "1.27.0", "1.26.8", ["1.26.9"])


def test_the_toolchain_is_keyed_in_the_workspace_image():
    plain = workspace_image.image_key("scheduler-build/golang:1.27.3", "1.27.3", "v", [])
    keyed = workspace_image.image_key("scheduler-build/golang:1.27.3", "1.27.3", "v", [], "golang.org/toolchain@x h1:a=")
    other = workspace_image.image_key("scheduler-build/golang:1.27.3", "1.27.3", "v", [], "golang.org/toolchain@x h1:b=")
    assert len({plain, keyed, other}) == 3


def test_a_module_refused_for_its_go_line_is_recognised():
    # `go mod download -json` escapes '>' in its JSON; the plain form is Go's stderr.
    for said in ('"Error": "k8s.io/kubernetes@v1.38.0 requires go \\u003e= 1.27.0 (running go 1.26.8; GOTOOLCHAIN=local)"',
                 "go: k8s.io/kubernetes@v1.38.0 requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)"):
        assert gotool._NEEDS_GO.search(said).group(1) in ("1.27.0", "1.27")
    assert gotool._NEEDS_GO.search("go: downloading k8s.io/api v0.38.0") is None
