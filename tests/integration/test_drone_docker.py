"""The `type: docker` Drone pipelines of ci/drone.yml, run in their step containers.

The Go module proxy refuses every Drone runner module, so testkit/drone_docker.py
is a STAND-IN for drone-runner-docker (what it does and leaves out is listed there):
one container per step from the step's image, the workspace volume at /drone/src,
the declared volumes (the host's Docker socket, the cache directory) and environment,
steps in `depends_on` order, secrets only where declared. The step image is the one
`inv release.step-image` builds here from local parts (no pull). The schema check of
the same file stays in tests/unit/project/test_pipelines.py.

Kept cheap: the unit-test step runs a few unit tests (PYTEST_ADDOPTS in the runner's
global environment, as DRONE_RUNNER_ENVIRON would set it), and the cache directory the
steps mount is this machine's warm cache. The release pipeline runs whole: its two
builds concurrently, then the image, the signed push to a registry on 127.0.0.1 (the
steps share the host's network) and the verify; each step's environment is read from
inside its container.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from scheduler_build import settings
from scheduler_build.image import ci_step
from testkit.drone_docker import run_pipeline
from testkit.registry_server import Registry

pytestmark = pytest.mark.pipelines  # inv test runs these last (tasks.py TIERS)

REPO = Path(__file__).resolve().parents[2]
UNIT_TESTS = "-m 'not integration and not e2e and not node' -k 'test_matrix'"  # tests/unit/build/test_matrix.py
PASSWORD = "drone-pw-4c1e"


def pipeline(name: str, text: str | None = None) -> dict:
    docs = yaml.safe_load_all(text if text is not None else (REPO / "ci/drone.yml").read_text())
    return next(d for d in docs if d and d["name"] == name)


@pytest.fixture(scope="module")
def step_image() -> str:
    proc = subprocess.run(["inv", "release.step-image"], cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()[0]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("drone") / "src"
    subprocess.run(["git", "clone", "-q", str(REPO), str(path)], check=True)
    return path


def run(doc: dict, checkout: Path, **kwargs):
    return run_pipeline(doc, checkout, runner_env={"PYTEST_ADDOPTS": UNIT_TESTS},
                        host_paths={"/var/cache/scheduler-build": settings.cache_dir()}, **kwargs)


def expect_ok(result) -> None:
    assert result.exit_code == 0, f"step {result.name}: {result.logs[-3000:]}"


def test_pull_request_docker_pipeline_in_step_containers(step_image, checkout):
    assert step_image == ci_step.TAG
    result = run(pipeline("pull-request-docker"), checkout)
    ran = [s.name for s in result.steps]
    assert ran[:2] == ["unit-tests", "render"], [(s.name, s.logs[-2000:]) for s in result.steps]
    unit, render = result.steps[:2]
    assert unit.exit_code == 0 and "passed" in unit.logs and "+ inv test --fast" in unit.logs, unit.logs[-3000:]
    assert render.exit_code == 0 and "+ inv config.render" in render.logs, render.logs[-3000:]
    assert render.environment["XDG_CACHE_HOME"] == "/var/cache" and "XDG_CACHE_HOME" not in unit.environment
    expect_ok(result.step("build"))
    assert "+ inv build" in result.step("build").logs


def test_negative_control_a_broken_step_stops_the_pipeline(step_image, checkout):
    text = (REPO / "ci/drone.yml").read_text().replace("      - inv config.render\n", "      - inv config.render --spec nope.yaml\n", 1)
    doc = pipeline("pull-request-docker", text)
    doc["steps"] = doc["steps"][1:]  # render first (its depends_on dropped): the broken step alone
    doc["steps"][0].pop("depends_on")
    result = run(doc, checkout)
    assert [(s.name, s.exit_code != 0) for s in result.steps] == [("render", True)]
    assert "nope.yaml" in result.steps[0].logs


@pytest.fixture(scope="module")
def signing(tmp_path_factory):
    keys = tmp_path_factory.mktemp("drone-keys")
    env = dict(os.environ, COSIGN_PASSWORD=PASSWORD)
    done = subprocess.run(["inv", "image.keygen", "--out", str(keys)], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    registry = Registry(tmp_path_factory.mktemp("drone-registry")).start()
    yield registry.host, keys
    registry.stop()


def test_release_docker_pipeline_builds_pushes_and_verifies_in_step_containers(step_image, checkout, signing):
    host, keys = signing
    secrets = {"cosign_key": (keys / "cosign.key").read_text(), "cosign_password": PASSWORD,
               "registry_repository": f"{host}/acme/drone-release", "registry_username": "", "registry_password": "",
               "cosign_pub": (keys / "cosign.pub").read_text(), "build_cache_repository": ""}
    doc = pipeline("release-docker")
    assert not run(doc, checkout, secrets=secrets, event="pull_request").triggered  # its trigger: version tags only
    result = run(doc, checkout, secrets=secrets, event="tag", ref="refs/tags/v0.0.0-drone")
    for step in result.steps:
        expect_ok(step)
    assert sorted(s.name for s in result.steps) == ["build-amd64", "build-arm64", "image", "push", "verify"]
    assert result.overlapped("build-amd64", "build-arm64")  # independent steps run concurrently
    # Secrets, as each running step saw them: the signing key in the push step alone, the public key in verify.
    assert [s.name for s in result.steps if "COSIGN_KEY" in s.environment] == ["push"]
    assert result.step("push").environment["COSIGN_KEY"] == secrets["cosign_key"]
    assert [s.name for s in result.steps if "COSIGN_PUB" in s.environment] == ["verify"]
    verify = result.step("verify").logs
    assert "ok provenance" in verify and "\nFAIL " not in verify, verify[-3000:]
