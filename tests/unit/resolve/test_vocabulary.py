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

from scheduler_build.golang import gotool
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
