"""The build spec loader: a valid spec loads; each invalid one is rejected with its field path."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.config import schedulerconfig
from scheduler_build.errors import UserError
from scheduler_build.spec import SpecError
from scheduler_build.spec.fields import seconds

REPO = Path(__file__).resolve().parents[3]

BASE = {
    "name": "acme-scheduler",
    "version": "0.3.0",
    "versionSuffix": "acme.1",
    "kubernetes": {"version": "1.36"},
    "plugins": [{"path": "./plugin", "package": "example.com/acme/p/pkg/p", "names": ["UnderlayIPLimit"]}],
    "patches": ["patches/0001-x.patch"],
    "platforms": ["linux/amd64", "linux/arm64"],
    "image": {"repository": "registry.example.com/acme/kube-scheduler"},
    "namespace": "acme-system",
    "profiles": [
        {"schedulerName": "acme-scheduler",
         "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]},
        {"schedulerName": "acme-batch",
         "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 1}],
                               "disabled": [{"name": "*"}]}}},
    ],
    "extenders": [{"urlPrefix": "http://ext:8888", "filterVerb": "filter", "prioritizeVerb": "prioritize",
                   "weight": 1, "httpTimeout": "3s", "managedResources": [{"name": "acme.com/ip", "ignoredByScheduler": True}]}],
    "leaderElection": {"leaderElect": True, "leaseDuration": "15s"},
    "clientConnection": {"qps": 50, "burst": 100},
    "parallelism": 16,
    "percentageOfNodesToScore": 0,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "deployment": {"replicas": 2, "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
    "referenceExtender": {"enabled": True, "image": "acme/extender:1.0", "nodeCacheCapable": True},
}


def write_tree(tmp_path: Path, data) -> Path:
    (tmp_path / "plugin").mkdir(exist_ok=True)
    (tmp_path / "plugin" / "go.mod").write_text("module example.com/acme/p\n\ngo 1.26\n")
    (tmp_path / "patches").mkdir(exist_ok=True)
    (tmp_path / "patches" / "0001-x.patch").write_text("--- a/x\n+++ b/x\n")
    path = tmp_path / "scheduler.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def test_valid_spec_loads_with_resolved_paths_and_defaults(tmp_path):
    s = spec_mod.load(write_tree(tmp_path, BASE))
    assert s.name == "acme-scheduler" and s.kubernetes_version == "1.36" and s.version_suffix == "acme.1"
    assert s.plugins[0].path == (tmp_path / "plugin").resolve()
    assert s.plugins[0].module == "example.com/acme/p"  # read from the plugin's go.mod
    assert s.patches == ((tmp_path / "patches" / "0001-x.patch").resolve(),)
    assert s.platforms == ("linux/amd64", "linux/arm64")
    assert s.leader_election["resourceName"] == "acme-scheduler"
    assert s.leader_election["resourceNamespace"] == "acme-system"
    assert s.leader_election["resourceLock"] == "leases"
    assert s.plugin_names == ("UnderlayIPLimit",)
    exts = schedulerconfig.extenders(s)
    assert len(exts) == 2 and exts[1]["urlPrefix"] == "https://acme-scheduler-extender.acme-system.svc:8888"
    assert exts[1]["nodeCacheCapable"] is True and exts[1]["weight"] == 1


def test_minimal_spec_gets_one_profile_named_after_the_scheduler(tmp_path):
    s = spec_mod.load(write_tree(tmp_path, {"name": "mini", "version": "1", "kubernetes": {"version": "latest"}}))
    assert s.profiles == [{"schedulerName": "mini"}]
    assert s.namespace == "kube-system" and s.image.repository == "scheduler-build/mini"
    assert s.plugins == () and s.patches == () and s.platforms == ()


def test_module_plugin_form(tmp_path):
    data = copy.deepcopy(BASE)
    data["plugins"] = [{"module": "example.com/x", "version": "v1.2.3", "package": "example.com/x/pkg", "names": ["X"]}]
    s = spec_mod.load(write_tree(tmp_path, data))
    assert s.plugins[0].module == "example.com/x" and s.plugins[0].version == "v1.2.3" and not s.plugins[0].local


def _set(data, dotted, value):
    """Set a value at a path like profiles[1].plugins.score; value _DEL deletes the key."""
    import re

    parts = [p for p in re.split(r"\.|\[(\d+)\]", dotted) if p]
    node = data
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    last = parts[-1]
    if value is _DEL:
        del node[last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value


_DEL = object()

# (mutations, expected field path) -- one row per distinct rule.
INVALID = [
    ({"name": "Acme_Scheduler"}, "name"),
    ({"name": "a" * 64}, "name"),
    ({"name": _DEL}, "name"),
    ({"version": "1.0+build"}, "version"),
    ({"versionSuffix": "acme..1"}, "versionSuffix"),
    ({"kubernetes.version": 1.3}, "kubernetes.version"),
    ({"kubernetes.version": "one.thirty"}, "kubernetes.version"),
    ({"kubernetes": _DEL}, "kubernetes"),
    ({"colour": "blue"}, "colour"),
    ({"plugins[0].path": "./missing"}, "plugins[0].path"),
    ({"plugins[0].names": []}, "plugins[0].names"),
    ({"plugins[0].names": ["underlayIPLimit"]}, "plugins[0].names[0]"),
    ({"plugins[0].package": "example.com/other/pkg"}, "plugins[0].package"),
    ({"plugins[0]": {"package": "example.com/x/pkg", "names": ["X"]}}, "plugins[0]"),
    ({"plugins[0]": {"module": "example.com/x", "package": "example.com/x/pkg", "names": ["X"]}}, "plugins[0].version"),
    ({"plugins[0]": {"module": "example.com/x", "version": "1.2", "package": "example.com/x/pkg", "names": ["X"]}}, "plugins[0].version"),
    ({"patches": ["patches/0001-x.patch", "nope.patch"]}, "patches[1]"),
    ({"platforms": ["linux/amd64", "windows/amd64"]}, "platforms[1]"),
    ({"platforms": ["linux/amd64", "linux/amd64"]}, "platforms[1]"),
    ({"image.repository": "Registry.Example.com/UP:tag"}, "image.repository"),
    ({"image.pullPolicy": "Sometimes"}, "image.pullPolicy"),
    ({"profiles[1].schedulerName": "acme-scheduler"}, "profiles[1].schedulerName"),
    ({"profiles[1].plugins.score.enabled[0].weight": -3}, "profiles[1].plugins.score.enabled[0].weight"),
    ({"profiles[1].plugins.score.enabled[0].weight": "high"}, "profiles[1].plugins.score.enabled[0].weight"),
    ({"profiles[0].plugins.filter": {"enabled": [{"name": "NodePorts", "weight": 2}]}}, "profiles[0].plugins.filter.enabled[0].weight"),
    ({"profiles[0].plugins.Sort-ing": {}}, "profiles[0].plugins.Sort-ing"),  # not a point's form; which points exist: test_vocabulary
    ({"profiles[0].plugins.score.enabled[0].name": "*"}, "profiles[0].plugins.score.enabled[0].name"),
    ({"profiles[0].pluginConfig": [{"name": "A", "args": {}}, {"name": "A", "args": {}}]}, "profiles[0].pluginConfig[1].name"),
    ({"profiles[0].pluginConfig[0].args": "fast"}, "profiles[0].pluginConfig[0].args"),
    ({"profiles[1].percentageOfNodesToScore": 101}, "profiles[1].percentageOfNodesToScore"),
    ({"profiles[1].plugins.queueSort": {"enabled": [{"name": "Custom"}], "disabled": [{"name": "*"}]}}, "profiles[1].plugins.queueSort"),
    ({"profiles": []}, "profiles"),
    ({"percentageOfNodesToScore": -1}, "percentageOfNodesToScore"),
    ({"podInitialBackoffSeconds": 20}, "podMaxBackoffSeconds"),
    ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds"),
    ({"parallelism": 0}, "parallelism"),
    ({"extenders[0].weight": 0}, "extenders[0].weight"),
    ({"extenders[0].weight": _DEL}, "extenders[0].weight"),
    ({"extenders[0].httpTimeout": 30000000000}, "extenders[0].httpTimeout"),
    ({"extenders[0].httpTimeout": "5 seconds"}, "extenders[0].httpTimeout"),
    ({"extenders[0].urlPrefix": "ext:8888"}, "extenders[0].urlPrefix"),
    ({"extenders[0].enableHttps": True}, "extenders[0].enableHttps"),
    ({"extenders[0].tlsConfig": {"insecure": True}}, "extenders[0].tlsConfig"),
    ({"extenders[0].managedResources[0].ignoredByScheduler": "yes"}, "extenders[0].managedResources[0].ignoredByScheduler"),
    ({"extenders": [{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "bindVerb": "bind"}]}, "extenders[1].bindVerb"),
    ({"extenders": [{"urlPrefix": "http://a"}]}, "extenders[0]"),
    ({"leaderElection.resourceLock": "endpoints"}, "leaderElection.resourceLock"),
    ({"leaderElection.renewDeadline": "20s"}, "leaderElection.renewDeadline"),
    ({"leaderElection.resourceName": "kube-scheduler", "namespace": "kube-system"}, "leaderElection.resourceName"),
    ({"clientConnection.qps": "many"}, "clientConnection.qps"),
    ({"deployment.replicas": 0}, "deployment.replicas"),
    ({"deployment.replicas": 3, "leaderElection.leaderElect": False}, "deployment.replicas"),
    ({"deployment.resources.requests.cpu": "lots"}, "deployment.resources.requests.cpu"),
    ({"namespace": "Acme"}, "namespace"),
    ({"referenceExtender.image": _DEL}, "referenceExtender.image"),
    ({"referenceExtender.port": 70000}, "referenceExtender.port"),
    ({"referenceExtender.tls": "no"}, "referenceExtender.tls"),
    ({"referenceExtender.bind": True, "extenders[0].bindVerb": "bind"}, "referenceExtender.bind"),
]


@pytest.mark.parametrize("mutations,path", INVALID, ids=[f"{i:02d}-{p}" for i, (_, p) in enumerate(INVALID)])
def test_invalid_spec_is_rejected_with_its_field_path(tmp_path, mutations, path):
    data = copy.deepcopy(BASE)
    for dotted, value in mutations.items():
        _set(data, dotted, value)
    with pytest.raises(SpecError) as info:
        spec_mod.load(write_tree(tmp_path, data))
    assert path in info.value.paths, str(info.value)
    assert isinstance(info.value, UserError)
    # the message names the path too, so the user sees it
    assert path in str(info.value)


def test_all_errors_are_reported_at_once(tmp_path):
    data = copy.deepcopy(BASE)
    data["name"] = "BAD"
    data["profiles"][1]["plugins"]["score"]["enabled"][0]["weight"] = -1
    data["extenders"][0]["weight"] = 0
    data["podInitialBackoffSeconds"] = 30
    with pytest.raises(SpecError) as info:
        spec_mod.load(write_tree(tmp_path, data))
    assert {"name", "profiles[1].plugins.score.enabled[0].weight", "extenders[0].weight",
            "podMaxBackoffSeconds"} <= set(info.value.paths)
    text = str(info.value)
    assert "4 errors" in text and "-1" in text and "'BAD'" in text


def test_platforms_are_the_ones_every_stage_supports(tmp_path):
    # One table (platforms.SUPPORTED): a platform the image stage refuses is refused here too.
    data = copy.deepcopy(BASE)
    data["platforms"] = ["linux/s390x", "linux/ppc64le"]
    assert spec_mod.load(write_tree(tmp_path, data)).platforms == ("linux/s390x", "linux/ppc64le")
    data["platforms"] = ["linux/amd64", "linux/arm"]
    with pytest.raises(SpecError) as info:
        spec_mod.load(write_tree(tmp_path, data))
    assert info.value.paths == ["platforms[1]"]
    assert str(info.value).startswith(f"{tmp_path / 'scheduler.yaml'}: platforms[1]: unsupported platform 'linux/arm'; "
                                      f"supported platforms: {', '.join(platforms.SUPPORTED)}")


def test_go_duration_seconds():
    assert seconds("1m30s") == 90.0 and seconds("1500ms") == seconds("1.5s") == 1.5 and seconds("0") == 0.0
    assert seconds("5") is None and seconds(5) is None and seconds(None) is None


def test_yaml_syntax_error_names_line_and_column(tmp_path):
    with pytest.raises(SpecError) as info:
        spec_mod.load(write_tree(tmp_path, "name: x\nkubernetes: {version: '1.36'\nversion: 1\n"))
    assert "line " in str(info.value) and "column " in str(info.value)


def test_duplicate_yaml_key_is_an_error(tmp_path):
    with pytest.raises(SpecError) as info:
        spec_mod.load(write_tree(tmp_path, "name: a\nname: b\nversion: '1'\nkubernetes: {version: '1.36'}\n"))
    assert "duplicate key 'name'" in str(info.value)


def test_missing_file_and_non_mapping(tmp_path):
    with pytest.raises(SpecError, match="no such file"):
        spec_mod.load(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="must be a mapping"):
        spec_mod.load(write_tree(tmp_path, "- a\n- b\n"))


def test_check_plugin_names_against_known_set(tmp_path):
    data = copy.deepcopy(BASE)
    data["profiles"][0]["plugins"]["filter"] = {"enabled": [{"name": "UnderlayIPLimit"}, {"name": "NodeAfinity"}]}
    s = spec_mod.load(write_tree(tmp_path, data))
    with pytest.raises(SpecError) as info:
        spec_mod.check_plugin_names(s, {"NodeResourcesFit", "ImageLocality", "NodeAffinity"}, "v1.36.0")
    assert info.value.paths == ["profiles[0].plugins.filter.enabled[1].name"]
    assert "did you mean 'NodeAffinity'" in str(info.value)


def test_example_spec_is_valid():
    s = spec_mod.load(REPO / "examples/underlay/scheduler.yaml", check_files=False)
    assert s.plugins[0].names == ("UnderlayIPLimit",)
    assert s.plugins[0].package == "example.com/acme/underlay/pkg/underlayiplimit"
    if (REPO / "examples/underlay/plugin/go.mod").is_file():
        assert spec_mod.load(REPO / "examples/underlay/scheduler.yaml").plugins[0].module == "example.com/acme/underlay"


def test_docs_show_the_complete_example_verbatim():
    example = (REPO / "examples/underlay/scheduler.yaml").read_text()
    assert "```yaml\n" + example + "```" in (REPO / "docs" / "build.md").read_text(), (
        "docs/build.md's build spec section must show examples/underlay/scheduler.yaml verbatim: "
        "copy the changed example into its ```yaml block")
