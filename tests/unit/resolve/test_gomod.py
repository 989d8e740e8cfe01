"""Unit tests: replace generation from real k8s.io/kubernetes go.mod text."""

from scheduler_build.resolve import gomod
from scheduler_build.resolve import versions


def test_parse_real_go_mod(data_dir):
    mod = gomod.parse((data_dir / "kubernetes-v1.36.3.go.mod").read_text())
    assert mod.module == "k8s.io/kubernetes"
    assert mod.go == "1.26.0"
    assert mod.requires["github.com/blang/semver/v4"] == "v4.0.0"
    assert mod.replaces["k8s.io/api"] == ("./staging/src/k8s.io/api", "")


def test_staging_replaces_follow_each_versions_own_go_mod(data_dir):
    new = gomod.staging_replaces(gomod.parse((data_dir / "kubernetes-v1.36.3.go.mod").read_text()), "v1.36.3")
    old = gomod.staging_replaces(gomod.parse((data_dir / "kubernetes-v1.34.4.go.mod").read_text()), "v1.34.4")
    assert len(new) == 33 and len(old) == 31
    # Modules that 1.36 added and 1.34 lacks are present only where they exist.
    assert {"k8s.io/streaming", "k8s.io/cri-streaming"} <= set(new)
    assert not {"k8s.io/streaming", "k8s.io/cri-streaming"} & set(old)
    assert set(new.values()) == {"v0.36.3"} and set(old.values()) == {"v0.34.4"}
    assert "k8s.io/kube-scheduler" in new and "k8s.io/kubernetes" not in new


def test_staging_version_mapping():
    assert gomod.staging_version("v1.36.3") == "v0.36.3"
    assert gomod.staging_version("v1.37.0-rc.1") == "v0.37.0-rc.1"


def test_non_staging_replaces_are_ignored():
    mod = gomod.parse(
        "module x\n\ngo 1.22\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n"
        "\tgithub.com/a/b => github.com/c/b v1.2.3 // pinned\n)\nreplace k8s.io/kms => ./staging/src/k8s.io/kms\n"
    )
    assert gomod.staging_modules(mod) == ["k8s.io/api", "k8s.io/kms"]
    assert mod.replaces["github.com/a/b"] == ("github.com/c/b", "v1.2.3")


def test_resolution_from_real_text(data_dir):
    info = '{"Version":"v1.36.3","Time":"2026-07-22T18:07:38Z"}'
    res = versions.resolution_from("1.36", "v1.36.3", (data_dir / "kubernetes-v1.36.3.go.mod").read_text(), info, ["1.36"])
    assert res.go_version == "1.26.0" and res.release_time.startswith("2026-07-22")
    assert res.replaces["k8s.io/client-go"] == "v0.36.3"


def test_go_sum_hash_is_the_tree_line_not_the_go_mod_line():
    go_sum = ("k8s.io/kubernetes v1.36.3 h1:tree=\n"
              "k8s.io/kubernetes v1.36.3/go.mod h1:gomod=\n"
              "k8s.io/kubernetes v1.36.2 h1:older=\n")
    assert gomod.go_sum_hash(go_sum, "k8s.io/kubernetes", "v1.36.3") == "h1:tree="
    assert gomod.go_sum_hash(go_sum, "k8s.io/kubernetes", "v1.36.9") == ""  # replaced by a patched copy: no line
