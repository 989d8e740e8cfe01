"""The one precedence rule (scheduler_build/precedence.py): flag > spec > environment > settings file > default.

One test per task family that decides a value from a spec and the settings, run for real up to the stage
(the build stage records its request and stops; the version resolve is stubbed: no network here). The
settings file is a real scheduler-build.yaml read by the program's own Config class.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from invoke import Context

from scheduler_build import cli, platforms, precedence
from scheduler_build.build import pipeline
from scheduler_build.commands import build as build_tasks
from scheduler_build.inputs import image as image_inputs
from scheduler_build.image import request as image_request
from scheduler_build.resolve import versions

REPO = Path(__file__).resolve().parents[2]
SPEC_NAME = "underlay-scheduler"  # examples/underlay/scheduler.yaml's name


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
    monkeypatch.setattr(precedence, "_noted", set())
    return requests


def project(tmp_path: Path, monkeypatch, settings_text: str, env: dict | None = None) -> tuple[Context, Path]:
    """A project directory holding the example spec and a scheduler-build.yaml; the program's Config read there."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    spec = tmp_path / "examples/underlay/scheduler.yaml"
    (tmp_path / "scheduler-build.yaml").write_text(
        f"spec: {{path: {spec}}}\npaths: {{cache_dir: {tmp_path / 'cache'}}}\n" + settings_text)
    for var, value in (env or {}).items():
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path)
    config = cli.SchedulerBuildConfig()
    config.load_shell_env()
    return Context(config=config), spec


def _built(c: Context, recorded: list, **flags) -> pipeline.BuildRequest:
    with pytest.raises(Stop):
        build_tasks.build(c, arch="amd64", **flags)
    return recorded.pop()


def _planned(c: Context, **flags) -> image_request.Plan:
    return image_request.plan(image_inputs.inputs(c, platforms="linux/amd64", **flags), "amd64")


def _build_dir(request: pipeline.BuildRequest) -> Path:
    """Where the build stage writes this request's binary (pipeline's own rule)."""
    return platforms.dist_dir_for(Path(request.dist_dir).resolve(), request.name or request.component, "v1.36.3",
                                  request.arch, request.goos)


def test_build_and_image_build_agree_on_name_with_a_spec_and_a_settings_file(tmp_path, monkeypatch, recorded, capsys):
    """build.name in scheduler-build.yaml and a spec: the spec wins for both, so image.build looks exactly
    where `build` wrote and finds the binary (no second compile)."""
    c, _ = project(tmp_path, monkeypatch, "build: {name: custom-name}\n")
    built = _built(c, recorded)
    planned = _planned(c)
    assert built.name == planned.name == SPEC_NAME
    assert planned.platform_dir("amd64") == _build_dir(built)
    assert "scheduler-build.yaml: build.name = custom-name is overridden by the spec's name underlay-scheduler" in capsys.readouterr().err
    # image.build of that layout asks for no build: the platform dir build wrote is the one it reads.
    _build_dir(built).mkdir(parents=True)
    (_build_dir(built) / "build-info.json").write_text("{}")
    assert planned.missing() == []


def test_a_flag_overrides_spec_and_settings_alike_and_says_so(tmp_path, monkeypatch, recorded, capsys):
    c, _ = project(tmp_path, monkeypatch, "build: {name: custom-name}\n")
    built = _built(c, recorded, name="flagged")
    planned = _planned(c, name="flagged")
    assert built.name == planned.name == "flagged"
    assert capsys.readouterr().err.count("note: --name flagged overrides the spec's name underlay-scheduler") == 1


def test_without_a_spec_the_settings_file_decides(tmp_path, monkeypatch, recorded):
    """Negative control: the same file without a spec gives custom-name, so the spec's win above is real."""
    c, _ = project(tmp_path, monkeypatch, "build: {name: custom-name}\n")
    built = _built(c, recorded, no_spec=True)
    planned = _planned(c, no_spec=True)
    assert built.name == planned.name == "custom-name"
    assert planned.platform_dir("amd64") == _build_dir(built)


def test_environment_beats_the_file_and_the_spec_beats_both(tmp_path, monkeypatch, recorded, capsys):
    c, _ = project(tmp_path, monkeypatch, "image: {version: 9.9.9}\nk8s: {version: \"1.35\"}\n",
                   env={"SCHEDULER_BUILD_IMAGE_VERSION": "7.7.7", "SCHEDULER_BUILD_K8S_VERSION": "1.99"})
    plain = _planned(c, no_spec=True, k8s_version="1.36")
    assert plain.spec_version == "7.7.7"  # environment > settings file
    with_spec = _planned(c)
    assert (with_spec.spec_version, with_spec.requested) == ("0.1.0", "1.36")  # the spec's version, kubernetes.version
    err = capsys.readouterr().err
    assert "environment variable SCHEDULER_BUILD_K8S_VERSION = 1.99 is overridden by the spec's kubernetes.version 1.36" in err
    assert _built(c, recorded).k8s_version == "1.36"


def test_the_default_holds_when_nothing_is_set(tmp_path, monkeypatch, recorded, capsys):
    c, _ = project(tmp_path, monkeypatch, "")
    assert _planned(c, no_spec=True).name == "kube-scheduler"
    assert _built(c, recorded, no_spec=True).name == ""  # empty: the component's name (pipeline)
    assert "note:" not in capsys.readouterr().err


def test_a_plain_build_flag_inside_a_project_says_the_spec_is_not_read(tmp_path, monkeypatch, recorded, capsys):
    c, spec = project(tmp_path, monkeypatch, "")
    assert _built(c, recorded, k8s_version="latest").plugin_sources == ()
    assert f"leave the spec {spec} unread (pass --spec {spec} to build it" in capsys.readouterr().err
    _built(c, recorded, k8s_version="latest", no_spec=True)  # negative control: asked for, no note
    assert "note:" not in capsys.readouterr().err
