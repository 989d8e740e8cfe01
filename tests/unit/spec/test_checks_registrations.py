"""Unit tests for plugin registrations as data: the spec's `register`/`imports`, main.go's rendering,
compiler errors mapped back to spec fields, version agreement, and the args-type hint."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler_build import spec as spec_mod
from scheduler_build.build import k8s_agreement as agreement
from scheduler_build.build import plugins
from scheduler_build.build.workspace import compile_errors, render_wrapper
from scheduler_build.config import validate
from scheduler_build.errors import UserError
from scheduler_build.resolve import versions
from scheduler_build.spec import SpecError
from scheduler_build.spec.checks_registrations import check_in_tree, in_tree_clashes

REPO = Path(__file__).resolve().parents[3]
COLLECTION = REPO / "tests/data/collection"
NODERES = "example.com/collection/pkg/noderes"
SCHEME = "example.com/collection/apis/config/scheme"


def resolution(version: str = "v1.36.3") -> versions.Resolution:
    minor = version[1:].rsplit(".", 1)[0]
    return versions.Resolution(requested=minor, version=version, minor=minor, go_version="1.26.0",
                          staging_version="v0." + version[3:], replaces={"k8s.io/api": "v0." + version[3:]})


def entry(**overrides) -> dict:
    item = {
        "path": str(COLLECTION),
        "package": "example.com/collection/pkg/gang",
        "names": ["CollectionGang"],
        "imports": [SCHEME],
        "register": [
            {"name": "NodeAllocatable", "factory": "NewAllocatable", "package": NODERES},
            {"name": "NodeFree", "factory": "NewFree", "package": NODERES},
        ],
    }
    item.update(overrides)
    return {k: v for k, v in item.items() if v is not None}


def load(tmp_path: Path, *entries: dict) -> spec_mod.Spec:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump({"name": "c", "version": "1", "kubernetes": {"version": "1.36"}, "plugins": list(entries)}))
    return spec_mod.load(path)


def test_register_and_imports_are_loaded_with_defaults_and_fields(tmp_path):
    (plugin,) = load(tmp_path, entry(register=[{"name": "NodeFree", "factory": "NewFree"}], package=NODERES, names=None)).plugins
    assert plugin.module == "example.com/collection" and plugin.imports == (SCHEME,)
    (reg,) = plugin.registrations
    assert (reg.name, reg.factory, reg.package, reg.field) == ("NodeFree", "NewFree", NODERES, "plugins[0].register[0]")
    full = load(tmp_path, entry()).plugins[0]
    assert full.plugin_names == ("CollectionGang", "NodeAllocatable", "NodeFree")
    assert [(r.name, r.factory, r.name_ident, r.field) for r in full.registrations][0] == (
        "CollectionGang", "New", "Name", "plugins[0].package")


@pytest.mark.parametrize("overrides, field, words", [
    ({"register": [{"name": "NodeFree", "factory": "newFree", "package": NODERES}]}, "plugins[0].register[0].factory", "exported"),
    ({"register": [{"name": "NodeFree", "factory": "NewFree", "package": "example.com/other/pkg"}]},
     "plugins[0].register[0].package", "not inside module 'example.com/collection'"),
    ({"register": [{"name": "NodeFree", "factory": "NewFree", "pkg": NODERES}]}, "plugins[0].register[0].pkg", "unknown field"),
    ({"register": [{"name": "NodeFree"}]}, "plugins[0].register[0].factory", "is required"),
    ({"register": [{"name": "CollectionGang", "factory": "New", "package": NODERES}]},
     "plugins[0].register[0].name", "already registered by plugins[0].names[0]"),
    ({"register": [{"name": "NodeFree", "factory": "NewFree", "package": "example.com/collection/pkg/../../x"}]},
     "plugins[0].register[0].package", "an element begins or ends with '.'"),
    ({"imports": ["example.com/collection/./apis"]}, "plugins[0].imports[0]", "an element begins or ends with '.'"),
    ({"imports": ["example.com/elsewhere/scheme"]}, "plugins[0].imports[0]", "not inside module"),
    ({"imports": [SCHEME, SCHEME]}, "plugins[0].imports[1]", "listed twice"),
    ({"names": ["A", "B"], "register": None}, "plugins[0].names", "list several under register"),
    ({"names": None, "register": None}, "plugins[0]", "registers nothing"),
    ({"package": None, "register": [{"name": "NodeFree", "factory": "NewFree"}]}, "plugins[0].package", "is required with names"),
])
def test_invalid_registrations_name_their_field(tmp_path, overrides, field, words):
    with pytest.raises(SpecError) as info:
        load(tmp_path, entry(**overrides))
    assert field in info.value.paths, str(info.value)
    assert words in str(info.value)


def test_a_name_registered_by_two_entries_names_both(tmp_path):
    second = entry(package=None, names=None, imports=None, register=[{"name": "NodeFree", "factory": "NewFree", "package": NODERES}])
    with pytest.raises(SpecError) as info:
        load(tmp_path, entry(), second)
    assert info.value.paths == ["plugins[1].register[0].name"]
    assert "already registered by plugins[0].register[1].name" in str(info.value)


def test_a_name_clashing_with_an_in_tree_plugin_names_both(tmp_path):
    loaded = load(tmp_path, entry(register=[{"name": "NodeResourcesFit", "factory": "NewFree", "package": NODERES}]))
    assert in_tree_clashes(loaded.plugins, frozenset({"CollectionGang2"}), "v1.36.3") == []  # no clash
    check_in_tree(loaded.plugins, frozenset({"CollectionGang2"}), "v1.36.3")
    # The build and config.validate name the same field (one check): the name itself.
    with pytest.raises(UserError, match=r"plugins\[0\].register\[0\].name: plugin name 'NodeResourcesFit' clashes with "
                                        r"the in-tree plugin 'NodeResourcesFit' of Kubernetes v1.36.3"):
        check_in_tree(loaded.plugins, frozenset({"NodeResourcesFit"}), "v1.36.3")
    with pytest.raises(UserError, match=r"plugins\[0\].names\[0\]: plugin name 'CollectionGang'"):
        check_in_tree(loaded.plugins, frozenset({"CollectionGang"}), "v1.36.3")


def test_config_validate_fields_refuses_an_in_tree_clash_with_its_field(tmp_path):
    """`inv config.validate --fields-only` (check_plugin_names) refuses it too, before any build."""
    loaded = load(tmp_path, entry(register=[{"name": "NodeResourcesFit", "factory": "NewFree", "package": NODERES}]))
    with pytest.raises(SpecError) as info:
        spec_mod.check_plugin_names(loaded, frozenset({"NodeResourcesFit", "CollectionGang"}), "v1.36.3")
    assert info.value.paths == ["plugins[0].names[0]", "plugins[0].register[0].name"]
    assert "'NodeResourcesFit' clashes with the in-tree plugin 'NodeResourcesFit' of Kubernetes v1.36.3" in str(info.value)
    spec_mod.check_plugin_names(loaded, frozenset({"NodeResourcesBalancedAllocation"}), "v1.36.3")  # no clash


def prepared(tmp_path: Path, loaded: spec_mod.Spec) -> plugins.Customization:
    return plugins.prepare(resolution(), loaded.plugins, [], tmp_path / "cache", in_tree=frozenset({"NodeResourcesFit"}),
                           source_of=lambda p: p.path)  # local entries only: no download


def test_main_go_registers_each_entry_once_per_package_with_unique_aliases(tmp_path):
    other = entry(path=str(tmp_path / "other"), package=None, names=None, imports=None,
                  register=[{"name": "OtherFree", "factory": "NewFree", "package": "example.com/other/pkg/noderes"}])
    (tmp_path / "other/pkg/noderes").mkdir(parents=True)
    (tmp_path / "other/go.mod").write_text("module example.com/other\n\ngo 1.26\n\nrequire k8s.io/kubernetes v1.34.4\n")
    (tmp_path / "other/pkg/noderes/free.go").write_text("package noderes\n\nvar NewFree = newFree\n")
    custom = prepared(tmp_path, load(tmp_path, entry(), other))
    main = render_wrapper(resolution(), "kube-scheduler", custom.imports, custom.requires, custom.local_replaces,
                          custom.registrations).files["main.go"]
    assert '\tgang "example.com/collection/pkg/gang" // plugins[0].package\n' in main
    assert f'\tnoderes "{NODERES}" // plugins[0].register[0].package\n' in main
    assert '\tnoderes2 "example.com/other/pkg/noderes" // plugins[1].register[0].package\n' in main
    assert f'\t_ "{SCHEME}" // plugins[0].imports[0]\n' in main
    assert "app.WithPlugin(gang.Name, gang.New), // plugins[0].package\n" in main
    assert 'app.WithPlugin("NodeAllocatable", noderes.NewAllocatable), // plugins[0].register[0].factory\n' in main
    assert 'app.WithPlugin("NodeFree", noderes.NewFree), // plugins[0].register[1].factory\n' in main
    assert 'app.WithPlugin("OtherFree", noderes2.NewFree), // plugins[1].register[0].factory\n' in main
    assert main.count(f'"{NODERES}"') == 1
    assert set(custom.requires) == {"example.com/collection", "example.com/other"}


def test_compiler_errors_map_back_to_the_registration(tmp_path):
    custom = prepared(tmp_path, load(tmp_path, entry()))
    main = render_wrapper(resolution(), plugins=custom.imports, registrations=custom.registrations).files["main.go"]
    line = next(n for n, text in enumerate(main.splitlines(), 1) if "noderes.NewFree" in text)
    output = ["# scheduler-build.local/wrapper", f"./main.go:{line}:36: cannot use noderes.NewFree (value of type func()) as "
              "runtime.PluginFactory value in argument to app.WithPlugin", "./main.go:3:1: unrelated"]
    assert compile_errors(main, output) == [("plugins[0].register[1].factory", f"main.go:{line}: cannot use noderes.NewFree "
                                            "(value of type func()) as runtime.PluginFactory value in argument to app.WithPlugin")]
    assert compile_errors(main, ["vendor/x/y.go:1:1: other"]) == []


def test_local_sources_are_checked_before_anything_runs(tmp_path):
    with pytest.raises(UserError, match=r"^plugins\[0\].register\[1\].factory: package .*noderes does not export NewFre"):
        prepared(tmp_path, load(tmp_path, entry(register=[{"name": "NodeAllocatable", "factory": "NewAllocatable", "package": NODERES},
                                                            {"name": "NodeFree", "factory": "NewFre", "package": NODERES}])))
    with pytest.raises(UserError, match=r"^plugins\[0\].imports\[0\]: package example.com/collection/apis/nope has no Go files"):
        prepared(tmp_path, load(tmp_path, entry(imports=["example.com/collection/apis/nope"])))
    with pytest.raises(UserError, match=r"^plugins\[0\].register\[0\].package: package example.com/collection/pkg/none"):
        prepared(tmp_path, load(tmp_path, entry(register=[{"name": "X", "factory": "New", "package": "example.com/collection/pkg/none"}])))
    assert not (tmp_path / "cache/plugins").exists()  # nothing snapshotted for a spec that fails its checks


def gomod(*requires: str) -> str:
    return "module example.com/p\n\ngo 1.26\n\nrequire (\n" + "".join(f"\t{r}\n" for r in requires) + ")\n"


def test_version_agreement():
    target = resolution("v1.36.3")
    assert agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/kubernetes v1.36.3", "k8s.io/api v0.36.1"), target) == []
    assert agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/api v0.0.0", "k8s.io/kubernetes v0.0.0"), target) == []
    with pytest.raises(UserError) as newer:
        agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/kubernetes v1.36.99"), target)
    assert str(newer.value) == ("plugins[0] (p) requires k8s.io/kubernetes v1.36.99 (Kubernetes v1.36.99), newer than the target "
                                "v1.36.3; raise kubernetes.version to v1.36.99, or lower the plugin's go.mod requirement to "
                                "v1.36.3 or older")
    with pytest.raises(UserError, match=r"requires k8s.io/api v0.36.7 \(Kubernetes v1.36.7\), newer than the target"):
        agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/kubernetes v1.36.3", "k8s.io/api v0.36.7"), target)
    with pytest.raises(UserError, match=r"v1.37.2 \(Kubernetes v1.37.2\), a newer minor than the target v1.36.3; "
                                        r"set kubernetes.version to \"1.37\""):
        agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/kubernetes v1.37.2"), target)
    (warning,) = agreement.check_plugin("plugins[0] (p)", gomod("k8s.io/kubernetes v1.34.4"), target)
    assert "written for Kubernetes 1.34" in warning and "against v1.36.3" in warning


def test_tidied_tree_must_keep_the_target():
    agreement.check_tidied(gomod("k8s.io/kubernetes v1.36.3"), resolution())
    with pytest.raises(UserError, match="selected k8s.io/kubernetes v1.36.4 instead of the target v1.36.3"):
        agreement.check_tidied(gomod("k8s.io/kubernetes v1.36.4"), resolution())


def test_refusal_hint_names_the_plugin_and_the_imports_field(tmp_path):
    loaded = load(tmp_path, entry(imports=None))
    output = ('E1123 run.go:72] "command failed" err="initializing profiles: creating profile for scheduler name c: '
              'initializing plugin \\"NodeAllocatable\\": want args to be of type NodeAllocatableArgs, got *runtime.Unknown"')
    hint = validate.refusal_hint(output, loaded)  # klog's escaped quotes, as the binary prints them
    assert "plugin 'NodeAllocatable'" in hint and "plugins[0].imports (module example.com/collection)" in hint
    assert validate.refusal_hint("something else", loaded) == validate.REFUSAL_HINT
