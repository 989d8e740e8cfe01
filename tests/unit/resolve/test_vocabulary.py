"""Vocabularies derived from the target release's own source (resolve.vocabulary, config.api_fields).

Unit: parsing types.go and kube_features.go, walking a configuration against an API, the one-line
refusal naming the minor that introduced a field. Integration: 1.37's podGroupPostFilter against the
real v0.37.2 / v0.36.3 sources, and a new minor needing no code change: a local file-based module proxy
serves k8s.io/kube-scheduler v0.98.0 (v0.37.2's config/v1) and v0.99.0 (the same plus an extension point
no release has); the spec is accepted for 1.99 only and refused for 1.98 naming 1.99.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from scheduler_build import gotool
from scheduler_build import spec as spec_mod
from scheduler_build.config import api_fields
from scheduler_build.config import validate as config_validate
from scheduler_build.resolve import vocabulary
from scheduler_build.spec import SpecError

TYPES_GO = '''
type KubeSchedulerConfiguration struct {
	metav1.TypeMeta `json:",inline"`
	Parallelism *int32 `json:"parallelism,omitempty"`
	LeaderElection componentbaseconfigv1alpha1.LeaderElectionConfiguration `json:"leaderElection"`
	// Profiles are ...
	Profiles []KubeSchedulerProfile `json:"profiles,omitempty"`
	Extenders []Extender `json:"extenders,omitempty"`
}

type KubeSchedulerProfile struct {
	SchedulerName *string `json:"schedulerName,omitempty"`
	Plugins *Plugins `json:"plugins,omitempty"`
	PluginConfig []PluginConfig `json:"pluginConfig,omitempty"`
}

type Plugins struct {
	Filter PluginSet `json:"filter,omitempty"`
	Score PluginSet `json:"score,omitempty"`
	Hidden PluginSet `json:"-"`
}

type PluginSet struct {
	Enabled []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

type Plugin struct {
	Name string `json:"name"`
	Weight *int32 `json:"weight,omitempty"`
}

type PluginConfig struct {
	Name string `json:"name"`
	Args runtime.RawExtension `json:"args,omitempty"`
}

type Extender struct {
	URLPrefix string `json:"urlPrefix"`
	HTTPTimeout metav1.Duration `json:"httpTimeout,omitempty"`
}
'''

FEATURES_GO = '''
const (
	// owner: @x
	Alpha featuregate.Feature = "Alpha"
)
var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Alpha: {
		{Version: version.MustParse("1.36"), Default: false, PreRelease: featuregate.Alpha},
	},

	genericfeatures.Graduated: {
		{Version: version.MustParse("1.30"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.33"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
}
'''


def small_api(version: str = "v1.36.3") -> vocabulary.ConfigAPI:
    return vocabulary.ConfigAPI(version=version, types=vocabulary.parse_types_go(TYPES_GO))


def test_types_go_gives_structs_fields_and_extension_points():
    api = small_api()
    assert api.extension_points == ("filter", "score")  # `json:"-"` is no field
    assert api.fields_of("KubeSchedulerConfiguration") == {
        "parallelism": "*int32", "leaderElection": "componentbaseconfigv1alpha1.LeaderElectionConfiguration",
        "profiles": "[]KubeSchedulerProfile", "extenders": "[]Extender"}  # the inline TypeMeta is skipped
    assert api.struct_of("[]KubeSchedulerProfile") == "KubeSchedulerProfile"
    assert api.struct_of("metav1.Duration") is None  # defined elsewhere: not walked
    assert api.has_path(("profiles", "plugins", "score")) and not api.has_path(("profiles", "plugins", "permit"))


def test_feature_gates_with_their_newest_stage():
    assert vocabulary.parse_feature_gates(FEATURES_GO) == {"Alpha": "Alpha", "Graduated": "GA-locked"}


def spec_with(tmp_path: Path, plugins: dict, extenders: list | None = None) -> spec_mod.Spec:
    data = {"name": "voc", "version": "0.1.0", "kubernetes": {"version": "v1.36.3"},
            "profiles": [{"schedulerName": "voc", "plugins": plugins}]}
    if extenders:
        data["extenders"] = extenders
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(data))
    return spec_mod.load(path)


def test_unknown_point_is_refused_naming_the_minor_that_introduced_it(tmp_path):
    spec = spec_with(tmp_path, {"permit": {"enabled": [{"name": "X"}]}, "score": {"enabled": [{"name": "Y"}]}})
    asked = []
    with pytest.raises(SpecError) as info:
        api_fields.check_api_fields(spec, small_api(), lambda keys: asked.append(keys) or "1.40")
    assert asked == [("profiles", "plugins", "permit")]
    assert info.value.paths == ["profiles[0].plugins.permit"]
    assert "introduced in 1.40" in str(info.value) and "v1.36.3" in str(info.value)
    assert len(str(info.value).splitlines()) == 1


def test_a_field_no_minor_has_gets_a_suggestion_and_known_fields_pass(tmp_path):
    api_fields.check_api_fields(spec_with(tmp_path, {"filter": {"disabled": [{"name": "*"}]}}), small_api(),
                                lambda keys: pytest.fail("asked for a known field"))
    with pytest.raises(SpecError) as info:
        api_fields.check_api_fields(spec_with(tmp_path, {"scroe": {"enabled": [{"name": "Y"}]}}), small_api(),
                                    lambda keys: None)
    assert "nor in a newer minor (did you mean 'score'?)" in str(info.value)


def test_an_extender_field_the_release_lacks_names_its_spec_path(tmp_path):
    spec = spec_with(tmp_path, {}, [{"urlPrefix": "http://x:1", "filterVerb": "filter"}])
    with pytest.raises(SpecError) as info:
        api_fields.check_api_fields(spec, small_api(), lambda keys: None)
    assert info.value.paths == ["extenders[0].filterVerb"]


def test_spec_load_takes_any_point_of_the_right_form_and_refuses_other_forms(tmp_path):
    spec = spec_with(tmp_path, {"podGroupPostFilter": {"disabled": [{"name": "*"}]}})
    assert spec.profiles[0]["plugins"] == {"podGroupPostFilter": {"disabled": [{"name": "*"}]}}
    with pytest.raises(SpecError) as info:
        spec_with(tmp_path, {"Pod-Group": {}})
    assert info.value.paths == ["profiles[0].plugins.Pod-Group"]


# --- integration: real sources, and a new minor served by a local proxy -----------------------------


@pytest.mark.integration
def test_pod_group_post_filter_is_accepted_for_137_and_refused_for_136_naming_137(tmp_path):
    spec = spec_with(tmp_path, {"podGroupPostFilter": {"disabled": [{"name": "*"}]}})
    cache = tmp_path / "cache"
    config_validate.check_config_api(spec, "v1.37.2", cache)
    with pytest.raises(SpecError) as info:
        config_validate.check_config_api(spec, "v1.36.3", cache)
    assert "introduced in 1.37" in str(info.value) and len(str(info.value).splitlines()) == 1
    assert "podGroupPostFilter" not in vocabulary.config_api("v1.36.3", cache).extension_points
    # cached per version: the second read needs no download
    assert vocabulary.cached_config_api("v1.37.2", cache).extension_points[-1] == "podGroupPostFilter"


def publish(proxy: Path, source: Path, version: str) -> None:
    """k8s.io/kube-scheduler at `version` in GOPROXY's file layout (list, .info, .mod, .zip)."""
    import json
    import zipfile

    at = proxy / vocabulary.SCHEDULER_MODULE / "@v"
    at.mkdir(parents=True, exist_ok=True)
    with open(at / "list", "a") as listing:
        listing.write(version + "\n")
    (at / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2026-01-01T00:00:00Z"}))
    (at / f"{version}.mod").write_bytes((source / "go.mod").read_bytes())
    with zipfile.ZipFile(at / f"{version}.zip", "w") as archive:
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{vocabulary.SCHEDULER_MODULE}@{version}/{path.relative_to(source).as_posix()}",
                                   (2026, 1, 1, 0, 0, 0))
            archive.writestr(info, path.read_bytes())


@pytest.fixture
def new_minor_proxy(tmp_path, monkeypatch):
    """A file proxy listing v0.98.0 (v0.37.2's config/v1) and v0.99.0 (plus `gangPermit`), and a module cache
    of its own, so the shared one never holds these made-up versions."""
    real = Path(gotool.mod_download(vocabulary.SCHEDULER_MODULE, "v0.37.2", timeout=300)["Dir"])
    types = (real / vocabulary.TYPES_GO).read_text()
    anchor = "\tPodGroupPostFilter PluginSet `json:\"podGroupPostFilter,omitempty\"`\n"
    assert anchor in types
    proxy = tmp_path / "proxy"
    for version, text in (("v0.98.0", types),
                          ("v0.99.0", types.replace(anchor, anchor + "\tGangPermit PluginSet `json:\"gangPermit,omitempty\"`\n"))):
        source = tmp_path / "src" / version
        (source / "config" / "v1").mkdir(parents=True)
        (source / "go.mod").write_text(f"module {vocabulary.SCHEDULER_MODULE}\n\ngo 1.25\n")
        (source / vocabulary.TYPES_GO).write_text(text)
        publish(proxy, source, version)
    modcache = tmp_path / "gomodcache"
    monkeypatch.setenv("GOPROXY", f"file://{proxy}")
    monkeypatch.setenv("GOMODCACHE", str(modcache))
    monkeypatch.setenv("GONOSUMDB", vocabulary.SCHEDULER_MODULE)
    monkeypatch.setenv("GOSUMDB", "off")
    yield proxy
    subprocess.run(["chmod", "-R", "u+w", str(modcache)], check=False)  # the module cache is read-only


@pytest.mark.integration
def test_a_new_minor_needs_no_code_change(tmp_path, new_minor_proxy):
    spec = spec_with(tmp_path, {"gangPermit": {"enabled": [{"name": "Gang"}]}})
    cache = tmp_path / "cache"
    assert "gangPermit" in vocabulary.config_api("v1.99.0", cache).extension_points
    config_validate.check_config_api(spec, "v1.99.0", cache)  # accepted for that version
    with pytest.raises(SpecError) as info:
        config_validate.check_config_api(spec, "v1.98.0", cache)
    assert info.value.paths == ["profiles[0].plugins.gangPermit"]
    assert "introduced in 1.99" in str(info.value)
    assert os.environ["GOPROXY"].startswith("file://")


@pytest.mark.integration
def test_the_readme_version_table_is_what_the_proxy_serves(tmp_path):
    from scheduler_build import settings
    from scheduler_build.resolve import version_table

    readme = Path(__file__).resolve().parents[3] / "docs" / "build.md"  # the table lives on the build page
    block = version_table.markdown(version_table.rows(settings.cache_dir()))
    assert block in readme.read_text(), "regenerate: python -m scheduler_build.resolve.version_table --update docs/build.md"
    # the generator rewrites only its block, and a stale block is noticed
    copy = tmp_path / "README.md"
    copy.write_text(f"before\n{version_table.BEGIN}\n| 1.0 | v1.0.0 |\n{version_table.END}\nafter\n")
    assert version_table.update(copy, block) is True and copy.read_text() == f"before\n{block}\nafter\n"
    assert version_table.update(copy, block) is False


def test_the_version_table_marks_the_points_each_minor_adds():
    from scheduler_build.resolve import version_table

    text = version_table.markdown([("1.36", "v1.36.3", "1.26.0", 33, ["filter"]),
                                   ("1.37", "v1.37.2", "1.26.0", 33, ["filter", "podGroupPostFilter"])])
    assert "| 1.37 | v1.37.2 | 1.26.0 | 33 | filter, **podGroupPostFilter** |" in text
    assert "| 1.36 | v1.36.3 | 1.26.0 | 33 | filter |" in text


def test_offline_render_falls_back_to_the_nearest_cached_older_release(tmp_path, monkeypatch, capsys):
    from scheduler_build.errors import UserError

    def offline(*args, **kwargs):
        raise UserError("cannot download k8s.io/kube-scheduler: dial tcp: no route")

    monkeypatch.setattr(gotool, "mod_download", offline)
    assert vocabulary.config_api_or_fallback("v1.37.2", tmp_path) is None  # nothing cached: the check is skipped
    for version in ("v1.35.4", "v1.36.3", "v1.38.0"):
        path = vocabulary._cache_file(tmp_path, "config-api", version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"format": %d, "types": {"Plugins": {"filter": "PluginSet"}}}' % vocabulary.CACHE_FORMAT)
    got = vocabulary.config_api_or_fallback("v1.37.2", tmp_path)
    assert got is not None and got.version == "v1.36.3"  # never a newer minor's vocabulary
    assert "checking against the cached v1.36.3" in capsys.readouterr().err
    with pytest.raises(UserError):
        vocabulary.config_api("v1.37.2", tmp_path)  # validate is strict


@pytest.mark.integration
def test_the_example_spec_validates_against_every_served_minor_its_plugin_supports():
    """Field by field (the configuration API and in-tree names of each minor's own source): every served
    minor from the one the example plugin's go.mod was written for. A binary per minor is not built here."""
    import json
    import subprocess
    import sys

    from scheduler_build.build import k8s_agreement
    from scheduler_build.resolve import gomod

    repo = Path(__file__).resolve().parents[3]
    listed = subprocess.run([sys.executable, "-m", "invoke", "k8s.versions", "--json"], cwd=repo,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr[-2000:]
    served = json.loads(listed.stdout)
    plugin_mod = gomod.parse((repo / "examples" / "underlay" / "plugin" / "go.mod").read_text())
    written_for = k8s_agreement.as_kubernetes("k8s.io/kubernetes", plugin_mod.requires["k8s.io/kubernetes"])[0]
    supported = [m for m in served if int(m.split(".")[1]) >= written_for]
    assert supported, served
    for minor in supported:
        got = subprocess.run([sys.executable, "-m", "invoke", "config.validate", "--spec",
                              str(repo / "examples" / "underlay" / "scheduler.yaml"), "--fields-only",
                              "--k8s-version", served[minor]], cwd=repo, capture_output=True, text=True)
        assert got.returncode == 0, f"{minor}: {got.stderr[-2000:]}"
        assert f"plugins of Kubernetes {served[minor]}" in got.stdout
