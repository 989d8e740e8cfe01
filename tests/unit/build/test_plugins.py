"""Unit tests for plugin snapshots and the wrapper's go.mod with plugins/patches."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_build import platforms
from scheduler_build.resolve import versions
from scheduler_build.build import plugins
from scheduler_build.build import snapshot
from scheduler_build import spec as spec_mod
from scheduler_build.inputs.build import default_request
from scheduler_build.errors import UserError
from scheduler_build.build.workspace import render_wrapper

REPO = Path(__file__).resolve().parents[3]


def resolution() -> versions.Resolution:
    return versions.Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0",
                          staging_version="v0.36.3", replaces={"k8s.io/api": "v0.36.3", "k8s.io/kube-scheduler": "v0.36.3"})


def fake_download(plugin: spec_mod.PluginSource, root: Path) -> Path:
    """A module plugin's source as the module cache would hold it. Mocked: unit tests have no proxy serving
    example.com modules; tests/integration/test_plugin_module_proxy.py downloads a real one."""
    directory = root / "modcache" / plugin.module
    (directory / "go.mod").parent.mkdir(parents=True, exist_ok=True)
    (directory / "go.mod").write_text(f"module {plugin.module}\n")
    for reg in plugin.registrations:
        pkg = directory / reg.package[len(plugin.module):].lstrip("/")
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "p.go").write_text('package p\n\nconst Name = "X"\n\nfunc New() {}\n')
    return directory


def prepare(plugin_list, cache, **kw):
    """plugins.prepare with the in-tree names given and module downloads faked (fake_download)."""
    kw.setdefault("in_tree", frozenset({"NodeResourcesFit"}))
    kw.setdefault("source_of", lambda p: p.path if p.path else fake_download(p, cache))
    return plugins.prepare(resolution(), plugin_list, [], cache, **kw)


def make_module(root: Path, module: str = "example.com/acme/x") -> Path:
    (root / "pkg/x").mkdir(parents=True)
    (root / "go.mod").write_text(f"module {module}\n\ngo 1.26\n")
    (root / "pkg/x/x.go").write_text('package x\n\nconst Name = "X"\n\nfunc New() {}\n')
    return root


def test_tree_digest_tracks_content_not_vcs(tmp_path):
    mod = make_module(tmp_path / "m")
    first = snapshot.tree_digest(mod)
    (mod / ".git").mkdir()
    (mod / ".git/HEAD").write_text("ref: x\n")
    assert snapshot.tree_digest(mod) == first
    (mod / "pkg/x/x.go").write_text("package x\n\nconst Y = 1\n")  # content, not VCS
    assert snapshot.tree_digest(mod) != first


def test_local_plugin_is_snapshotted_and_replaced_by_shape(tmp_path):
    mod = make_module(tmp_path / "m")
    (mod / "pkg/x/x_test.go").write_text("package x\n")
    cache = tmp_path / "cache"
    spec = spec_mod.PluginSource(package="example.com/acme/x/pkg/x", names=("X",), path=mod)
    custom = prepare([spec], cache)
    (content_dir,) = (cache / "plugins").iterdir()
    (shape_dir,) = (cache / "plugin-modules").iterdir()
    assert (content_dir / "pkg/x/x.go").read_text() == (mod / "pkg/x/x.go").read_text()
    # The content snapshot is what `go mod vendor` copies: no go.mod, no tests; the shape copy is the module.
    assert not (content_dir / "go.mod").exists() and not (content_dir / "pkg/x/x_test.go").exists()
    assert (shape_dir / "go.mod").is_file() and (shape_dir / "pkg/x/x_test.go").is_file()
    assert custom.requires == {"example.com/acme/x": plugins.LOCAL_VERSION}
    assert custom.local_replaces == {"example.com/acme/x": f"../../plugin-modules/{shape_dir.name}"}
    assert custom.overlays == {"example.com/acme/x": content_dir}
    assert custom.imports[0].package == "example.com/acme/x/pkg/x" and custom.imports[0].alias == "x"
    assert custom.plugins_info[0].sha256.startswith(content_dir.name)
    # An edit that keeps go.mod, go.sum and the imports keeps go.mod (so tidy and vendor stay
    # cached) and changes only the snapshot mounted over vendor/<module>.
    (mod / "pkg/x/x.go").write_text((mod / "pkg/x/x.go").read_text() + "// edited\n")
    edited = prepare([spec], cache)
    assert edited.local_replaces == custom.local_replaces
    assert edited.overlays != custom.overlays and (edited.overlays["example.com/acme/x"] / "pkg/x/x.go").read_text().endswith("// edited\n")
    # A new import changes the shape, hence go.mod, hence tidy and vendor.
    (mod / "pkg/x/x.go").write_text('package x\n\nimport "strings"\n\nconst Name = "X"\n\nvar _ = strings.ToUpper\n\nfunc New() {}\n')
    assert prepare([spec], cache).local_replaces != custom.local_replaces
    (mod / "go.sum").write_text("k8s.io/api v0.36.3 h1:x\n")
    assert snapshot.shape_digest(mod, "example.com/acme/x") != snapshot.shape_digest(mod, "example.com/acme/y")


def test_vendored_files_exclude_tests_and_module_files():
    assert snapshot.vendored("pkg/x/x.go") and snapshot.vendored("pkg/x/data.json")
    assert not any(snapshot.vendored(p) for p in ("go.mod", "go.sum", "pkg/x/x_test.go", "pkg/x/testdata/in.yaml"))


def test_module_plugin_and_aliases(tmp_path):
    specs = [
        spec_mod.PluginSource(package="example.com/a/pkg/filter", names=("A",), module="example.com/a", version="v1.2.3"),
        spec_mod.PluginSource(package="example.com/b/pkg/filter", names=("B",), module="example.com/b", version="v0.1.0"),
        spec_mod.PluginSource(package="example.com/c/app", names=("C",), module="example.com/c", version="v0.1.0"),
    ]
    custom = prepare(specs, tmp_path)
    assert custom.requires == {"example.com/a": "v1.2.3", "example.com/b": "v0.1.0", "example.com/c": "v0.1.0"}
    assert custom.local_replaces == {}
    assert [i.alias for i in custom.imports] == ["filter", "filter2", "app2"]  # never shadows main.go's own imports


def test_package_outside_module_and_missing_go_mod(tmp_path):
    mod = make_module(tmp_path / "m")
    with pytest.raises(UserError, match="not inside module example.com/acme/x"):
        prepare([spec_mod.PluginSource(package="example.com/other/pkg", names=("X",), path=mod)], tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="has no go.mod"):
        prepare([spec_mod.PluginSource(package="example.com/e", names=("E",), path=tmp_path / "empty")], tmp_path)
    with pytest.raises(UserError, match="plugins only apply to kube-scheduler"):
        prepare([spec_mod.PluginSource(package="example.com/acme/x", names=("X",), path=mod)], tmp_path, component="kube-apiserver")


def test_wrapper_go_mod_plain_is_unchanged_and_custom_adds_replaces():
    plain = render_wrapper(resolution()).files["go.mod"]
    assert "=> ../../" not in plain and "require (" not in plain
    assert "\tk8s.io/api => k8s.io/api v0.36.3\n" in plain
    custom = render_wrapper(
        resolution(), requires={"example.com/acme/x": plugins.LOCAL_VERSION},
        local_replaces={"example.com/acme/x": "../../plugins/abc", "k8s.io/api": "../../patched/def/k8s.io_api"},
    ).files["go.mod"]
    assert f"\texample.com/acme/x {plugins.LOCAL_VERSION}\n" in custom
    assert "\texample.com/acme/x => ../../plugins/abc\n" in custom
    # A patched staging module is replaced by its copy, not pinned to the published version too.
    assert "\tk8s.io/api => ../../patched/def/k8s.io_api\n" in custom and "k8s.io/api => k8s.io/api v0.36.3" not in custom
    assert "\tk8s.io/kube-scheduler => k8s.io/kube-scheduler v0.36.3\n" in custom


def test_local_package_must_exist_and_export_name_and_new(tmp_path):
    mod = make_module(tmp_path / "m")
    plugins.check_local_package(mod, "example.com/acme/x", "example.com/acme/x/pkg/x")
    with pytest.raises(UserError, match="has no Go files at"):
        plugins.check_local_package(mod, "example.com/acme/x", "example.com/acme/x/pkg/typo")
    (mod / "pkg/x/x.go").write_text("package x\n\nfunc New() {}\n")
    with pytest.raises(UserError, match="does not export Name"):
        plugins.check_local_package(mod, "example.com/acme/x", "example.com/acme/x/pkg/x")
    example = REPO / "examples/underlay/plugin"
    plugins.check_local_package(example, "example.com/acme/underlay", "example.com/acme/underlay/pkg/underlayiplimit")


def test_module_plugin_sources_are_checked_like_local_ones(tmp_path):
    plugin = spec_mod.PluginSource(
        package="", names=(), module="example.com/m", version="v1.0.0", field="plugins[0]",
        register=(spec_mod.Registration(name="M", factory="NewM", package="example.com/m/pkg/m", field="plugins[0].register[0]"),),
    )
    downloaded = tmp_path / "modcache/example.com/m"
    downloaded.mkdir(parents=True)
    (downloaded / "go.mod").write_text("module example.com/m\n\nrequire k8s.io/kubernetes v1.36.3\n")
    with pytest.raises(UserError, match=r"^plugins\[0\].register\[0\].package: package example.com/m/pkg/m has no Go files"):
        prepare([plugin], tmp_path, source_of=lambda p: downloaded)
    (downloaded / "pkg/m").mkdir(parents=True)
    (downloaded / "pkg/m/m.go").write_text("package m\n\nfunc NewM(a, b, c int) {}\n")  # the compile judges the signature
    custom = prepare([plugin], tmp_path, source_of=lambda p: downloaded)
    assert custom.requires == {"example.com/m": "v1.0.0"} and custom.registrations[0].name_expr == '"M"'


def test_a_compile_error_in_a_local_plugin_names_its_file_on_this_host(tmp_path):
    """Go in the builder names `vendor/<module>/x.go:89:19`, which exists nowhere on the host; the build shows
    the plugin's own file, which does. A module from the proxy, and another module's path, stay as they are."""
    plugin = tmp_path / "nodelimit"
    (plugin / "pkg").mkdir(parents=True)
    (plugin / "pkg" / "nodelimit.go").write_text("package pkg\n")
    local = plugins.PluginInfo(package="example.com/acme/nodelimit/pkg", names=["NodeLimit"], source="path",
                               path=str(plugin), module="example.com/acme/nodelimit")
    remote = plugins.PluginInfo(package="example.com/other/pkg", names=["Other"], source="module",
                                module="example.com/other", version="v1.0.0")
    for prefix in ("", "./", "/src/"):
        line = plugins.host_paths(f"{prefix}vendor/example.com/acme/nodelimit/pkg/nodelimit.go:89:19: undefined: x",
                                  [remote, local])
        assert line == f"{plugin}/pkg/nodelimit.go:89:19: undefined: x"
        assert Path(line.split(":")[0]).is_file()
    other = "vendor/example.com/other/pkg/a.go:1:1: boom"
    assert plugins.host_paths(other, [remote, local]) == other  # the negative control: not a local plugin's
    assert plugins.host_paths("vendor/example.com/acme/nodelimitx/a.go:1:1: x", [local]).startswith("vendor/")
