"""The one precedence rule (scheduler_build/settings/precedence.py): flag > spec > environment > settings file > default.

One test per task family that decides a value from a spec and the settings, run for real up to the stage
(the build stage records its request and stops; the version resolve is stubbed: no network here). The
settings file is a real scheduler-build.yaml read by the program's own Config class.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from invoke import Context

from scheduler_build import platforms, settings
from scheduler_build.cli import app as cli
from scheduler_build.settings import precedence
from scheduler_build.errors import UserError
from scheduler_build.build import pipeline
from scheduler_build.commands import build as build_tasks
from scheduler_build.inputs import image as image_inputs
from scheduler_build.image import request as image_request
from scheduler_build.resolve import versions

REPO = Path(__file__).resolve().parents[3]
SPEC_NAME = "underlay-scheduler"  # examples/underlay/scheduler.yaml's name


# The recording build stage, shared with the build-request tests.
from tests.unit.commands.test_common import Stop, recorded  # noqa: E402,F401


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
    config.load_collection(settings.invoke_defaults())  # as the program does: the namespace registers every key
    config.load_shell_env()
    return Context(config=config), spec


def _built(c: Context, recorded: list, **flags) -> pipeline.BuildRequest:
    with pytest.raises(Stop):
        build_tasks.build(c, arch="amd64", **flags)
    return recorded.pop()


def _planned(c: Context, **flags) -> image_request.Plan:
    return image_request.plan(image_inputs.image_inputs(c, platforms="linux/amd64", **flags), "amd64")


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


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: c
"""


def test_deploy_decides_timeout_and_context_by_the_same_rule(tmp_path, monkeypatch, recorded):
    from scheduler_build.inputs.deploy import deploy_inputs

    c, spec = project(tmp_path, monkeypatch, "deploy: {timeout: 100, context: from-file}\n",
                      env={"SCHEDULER_BUILD_DEPLOY_TIMEOUT": "2m"})
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    decided = deploy_inputs(c, kubeconfig=str(tmp_path / "kubeconfig"))
    assert (decided.timeout, decided.context, decided.spec.path) == (120.0, "from-file", spec)  # environment > file
    assert deploy_inputs(c, kubeconfig=str(tmp_path / "kubeconfig"), timeout="7").timeout == 7.0  # flag > environment
    monkeypatch.delenv("SCHEDULER_BUILD_DEPLOY_TIMEOUT")
    config = cli.SchedulerBuildConfig()
    config.load_collection(settings.invoke_defaults())  # as the program does: the namespace registers every key
    config.load_shell_env()
    assert deploy_inputs(Context(config=config), kubeconfig=str(tmp_path / "kubeconfig")).timeout == 100.0  # the file


def test_config_render_and_image_build_agree_on_the_spec_over_the_settings(tmp_path, monkeypatch, recorded):
    """image.repository in the settings file and the spec's image.repository: the spec wins for both, so the
    Deployment config.render writes names the image image.build tags; config.out is flag > file > default."""
    from scheduler_build.config import render
    from scheduler_build.inputs.config import render_inputs

    c, _ = project(tmp_path, monkeypatch, "image: {repository: acme/from-settings}\n")
    decided = render_inputs(c)
    planned = _planned(c)
    assert render.image_ref(decided.spec, planned.version).split(":")[0] == planned.repository == \
        "registry.example.com/acme/underlay-scheduler"
    assert decided.out_dir == tmp_path / "dist" / "config" / SPEC_NAME  # the default, named after the spec
    assert render_inputs(c, out="here").out_dir == Path("here")
    plain = _planned(c, no_spec=True, k8s_version="1.36")  # negative control: without a spec the setting holds
    assert plain.repository == "acme/from-settings"


def test_a_variable_is_read_as_written_over_a_files_value(tmp_path, monkeypatch, recorded):
    """invoke cast a variable to the type of the file's value: `false` over a file's `true` was true."""
    from scheduler_build.inputs.common import option

    c, _ = project(tmp_path, monkeypatch, "push: {insecure: true}\ndeploy: {timeout: 100}\n",
                   env={"SCHEDULER_BUILD_PUSH_INSECURE": "false", "SCHEDULER_BUILD_DEPLOY_TIMEOUT": "2m"})
    assert (option(c, "push.insecure"), option(c, "deploy.timeout")) == (False, 120.0)
    assert option(c, "push.insecure", True) is True  # negative control: the flag still wins


def _reloaded() -> Context:
    """The program's Config read again in the current directory and environment (after a monkeypatch)."""
    config = cli.SchedulerBuildConfig()
    config.load_collection(settings.invoke_defaults())  # as the program does: the namespace registers every key
    config.load_shell_env()
    return Context(config=config)


def test_cluster_decides_by_the_same_rule_and_reads_no_spec(tmp_path, monkeypatch, recorded, capsys):
    """cluster.up: flag > environment > settings file > default, and the spec level is empty on purpose: the
    project's spec (kubernetes.version 1.36) does not change the API server's version, which the file says."""
    from scheduler_build.inputs.cluster import up_inputs

    c, _ = project(tmp_path, monkeypatch, "k8s: {version: \"1.35\"}\ncluster: {timeout: 100, etcd: /opt/etcd}\n",
                   env={"SCHEDULER_BUILD_CLUSTER_TIMEOUT": "2m"})
    decided = up_inputs(c)
    assert decided.timeout == 120.0  # environment > settings file
    assert decided.etcd == "/opt/etcd"  # settings file > default
    assert decided.builds["kube-apiserver"].k8s_version == "1.35"  # the file; no spec level in cluster.up
    assert decided.state_dir == tmp_path / "cache" / "cluster"  # default (cluster.state_dir empty: <cache>/cluster)
    flagged = up_inputs(c, k8s_version="1.34", timeout="7", state_dir_flag=str(tmp_path / "here"))
    assert (flagged.builds["kube-apiserver"].k8s_version, flagged.timeout, flagged.state_dir) == \
        ("1.34", 7.0, tmp_path / "here")  # flag > everything
    assert up_inputs(c, apiserver="/bin/true").builds == {}  # an explicit binary: nothing to build
    monkeypatch.delenv("SCHEDULER_BUILD_CLUSTER_TIMEOUT")
    assert up_inputs(_reloaded()).timeout == 100.0  # without the variable, the file (negative control)
    assert "note:" not in capsys.readouterr().err  # the spec was never consulted, so nothing was overridden


def test_dev_decides_by_the_same_rule(tmp_path, monkeypatch, recorded, capsys):
    """dev.run: --spec > spec.path; the spec's name and kubernetes.version > environment > file; the build's
    settings environment > file > default; --state-dir > cluster.state_dir."""
    from scheduler_build.inputs.dev import dev_inputs

    c, spec = project(tmp_path, monkeypatch, "build: {name: custom-name, gocache_volume: from-file}\n"
                      "builder: {image: from-file/golang}\n",
                      env={"SCHEDULER_BUILD_K8S_VERSION": "1.99", "SCHEDULER_BUILD_BUILDER_IMAGE": "from-env/golang"})
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    decided = dev_inputs(c, kubeconfig=str(tmp_path / "kubeconfig"))
    request = decided.request
    assert decided.spec.path == spec  # spec.path from the settings file
    assert (request.name, request.k8s_version) == (SPEC_NAME, "1.36")  # spec > environment, spec > file
    assert request.builder_image == "from-env/golang"  # environment > file
    assert request.gocache_volume == "from-file"  # file > default
    assert request.component == "kube-scheduler" and request.pull is True  # default
    assert decided.workdir == tmp_path / "cache" / "dev" / SPEC_NAME
    err = capsys.readouterr().err
    assert "environment variable SCHEDULER_BUILD_K8S_VERSION = 1.99 is overridden by the spec's kubernetes.version 1.36" in err
    other = spec.parent / "other.yaml"  # beside it: its plugin and patch paths are relative
    other.write_text(spec.read_text().replace(f"name: {SPEC_NAME}", "name: other-scheduler"))
    assert dev_inputs(c, spec=str(other), kubeconfig=str(tmp_path / "kubeconfig")).spec.name == "other-scheduler"  # flag
    with pytest.raises(UserError, match="no local control plane in .*/here"):  # --state-dir > the default
        dev_inputs(c, state_dir_flag=str(tmp_path / "here"))


def test_release_decides_by_the_same_rule(tmp_path, monkeypatch, recorded, capsys):
    """release.matrix: --k8s-versions > the spec's kubernetes.version > environment > file; --spec > the
    environment's spec.path > the file's > the default scheduler.yaml of the project directory."""
    from scheduler_build.inputs.release import matrix_inputs

    c, spec = project(tmp_path, monkeypatch, "k8s: {version: \"1.35\"}\n", env={"SCHEDULER_BUILD_K8S_VERSION": "1.99"})
    decided = matrix_inputs(c)
    assert (decided.spec.path, decided.k8s_versions) == (spec, "1.36")  # the file's spec.path; spec > env > file
    assert "SCHEDULER_BUILD_K8S_VERSION = 1.99 is overridden by the spec's kubernetes.version 1.36" in capsys.readouterr().err
    assert matrix_inputs(c, k8s_versions="1.34,1.35").k8s_versions == "1.34,1.35"  # flag > spec
    other = spec.parent / "other.yaml"  # beside it: its plugin and patch paths are relative
    other.write_text(spec.read_text().replace(f"name: {SPEC_NAME}", "name: other-scheduler"))
    assert matrix_inputs(c, spec=str(other)).spec.name == "other-scheduler"  # --spec > the file's spec.path
    monkeypatch.setenv("SCHEDULER_BUILD_SPEC_PATH", str(other))
    assert matrix_inputs(_reloaded()).spec.name == "other-scheduler"  # environment > file
    monkeypatch.delenv("SCHEDULER_BUILD_SPEC_PATH")
    (tmp_path / "scheduler-build.yaml").write_text("")  # no spec.path anywhere: the default, scheduler.yaml here
    with pytest.raises(UserError, match=f"build spec {tmp_path / 'scheduler.yaml'} not found"):
        matrix_inputs(_reloaded())
