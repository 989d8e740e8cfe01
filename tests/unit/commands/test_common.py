"""One home for "a BuildRequest from settings" (commands._common.build_request): `inv build`, `image.build`
building a missing platform, `dev.run` and the cluster's component builds read the same `builder.*` and
`build.*` settings. The tasks run for real up to the build stage, whose `run` records the request and stops
(the compile itself is covered by the integration tests); the version resolve is stubbed: no network here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from invoke import Config, Context

from scheduler_build import settings
from scheduler_build.settings import precedence
from scheduler_build.build import pipeline
from scheduler_build.commands import build as build_tasks
from scheduler_build.inputs import cluster as cluster_inputs
from scheduler_build.commands import image as image_tasks
from scheduler_build.resolve import versions

SETTINGS = {
    "builder": {"image": "registry.example/golang:custom", "pull": False, "goroot": "/opt/go", "go": "1.27.3"},
    "build": {"gocache_volume": "acme-gocache", "reuse_builder": False, "cgo_static": True,
              "source_date_epoch": "1700000000", "version_suffix": "acme.9"},
}


class Stop(Exception):
    """Raised by the recording build stage: the request is what the test wanted."""


@pytest.fixture
def recorded(monkeypatch):
    requests: list[pipeline.BuildRequest] = []

    def run(request: pipeline.BuildRequest):
        requests.append(request)
        raise Stop

    monkeypatch.setattr(pipeline, "run", run)
    monkeypatch.setattr(versions, "resolve", lambda requested, cache: versions.Resolution(
        requested=requested, version="v1.36.3", minor="1.36", go_version="1.26.0", staging_version="v0.36.3"))
    monkeypatch.setattr(precedence, "_noted", set())  # each test sees its own one-line notes
    return requests


def context(tmp_path: Path, **overrides) -> Context:
    config = Config(defaults=settings.DEFAULTS, overrides={"paths": {"dist_dir": str(tmp_path / "dist"),
                                                                      "cache_dir": str(tmp_path / "cache")}, **overrides})
    return Context(config=config)


def _settings_seen(request: pipeline.BuildRequest) -> dict:
    return {"builder.image": request.builder_image, "builder.pull": request.pull, "builder.goroot": request.goroot,
            "builder.go": request.go,
            "build.gocache_volume": request.gocache_volume, "build.reuse_builder": request.reuse_builder,
            "build.cgo_static": request.cgo_static, "build.source_date_epoch": request.source_date_epoch,
            "dist": Path(request.dist_dir)}


def test_inv_build_and_image_build_read_the_same_settings(tmp_path, recorded):
    c = context(tmp_path, **SETTINGS)
    with pytest.raises(Stop):
        build_tasks.build(c, no_spec=True, k8s_version="1.36")
    with pytest.raises(Stop):  # dist/ holds nothing: image.build builds the missing platform first
        image_tasks.build(c, no_spec=True, k8s_version="1.36", platforms="linux/amd64")
    built, missing = recorded
    assert _settings_seen(built) == _settings_seen(missing) == {
        "builder.image": "registry.example/golang:custom", "builder.pull": False, "builder.goroot": "/opt/go",
        "builder.go": "1.27.3", "build.gocache_volume": "acme-gocache", "build.reuse_builder": False, "build.cgo_static": True,
        "build.source_date_epoch": "1700000000", "dist": tmp_path / "dist"}
    assert (missing.k8s_version, missing.arch, missing.name, missing.version_suffix) == ("1.36", "amd64", "kube-scheduler", "acme.9")


def test_a_changed_setting_reaches_both_paths(tmp_path, recorded):
    """Negative control: without the settings both requests carry the defaults, so the test above can fail."""
    c = context(tmp_path)
    with pytest.raises(Stop):
        build_tasks.build(c, no_spec=True, k8s_version="1.36")
    with pytest.raises(Stop):
        image_tasks.build(c, no_spec=True, k8s_version="1.36", platforms="linux/amd64")
    for request in recorded:
        assert request.builder_image == settings.default("builder.image")
        assert request.go == settings.default("builder.go") == ""
        assert request.gocache_volume == settings.gocache_volume(settings.default("build.gocache_volume")) != "acme-gocache"


def test_image_build_of_a_spec_builds_with_its_plugins_and_the_settings(tmp_path, recorded):
    spec = Path(__file__).resolve().parents[3] / "examples/underlay/scheduler.yaml"
    c = context(tmp_path, **SETTINGS)
    with pytest.raises(Stop):
        image_tasks.build(c, spec=str(spec), platforms="linux/arm64")
    (request,) = recorded
    assert request.plugin_sources and request.patches and request.arch == "arm64"
    assert (request.builder_image, request.gocache_volume) == ("registry.example/golang:custom", "acme-gocache")


def test_cluster_component_builds_keep_their_own_identity(tmp_path, recorded):
    c = context(tmp_path, **{**SETTINGS, "build": {**SETTINGS["build"], "name": "acme", "arch": "riscv64"}})
    request = cluster_inputs.component_request(c, "kube-apiserver")
    assert (request.builder_image, request.gocache_volume) == ("registry.example/golang:custom", "acme-gocache")
    assert (request.component, request.name, request.version_suffix) == ("kube-apiserver", "kube-apiserver", "")
    assert request.arch != "riscv64"  # the host's: it runs here


def test_the_go_flag_wins_over_builder_go(tmp_path, recorded):
    c = context(tmp_path, **SETTINGS)
    with pytest.raises(Stop):
        build_tasks.build(c, no_spec=True, k8s_version="1.37", go="1.27.4")
    (request,) = recorded
    assert request.go == "1.27.4"
