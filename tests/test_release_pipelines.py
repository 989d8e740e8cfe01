"""Each release pipeline's step commands, run in order the way its runner would.

A fresh clone of this checkout (the committed tree, as a runner checks out), a
real registry on 127.0.0.1 in place of the production one, a throwaway cosign key
pair in the secrets, the real cosign. What the runner provides is stood in for:

- Drone (exec runner): each step's `commands` run as one `sh -e` script with the
  step's `environment` (`from_secret` filled from the test's secrets), steps in
  file order (which honours `depends_on`).
- GitHub Actions: the `run:` steps of the build job once per matrix entry, then
  the release job's; `${{ matrix.* }}`, `${{ secrets.* }}`, `${{ vars.* }}` filled
  in, `$GITHUB_ENV` carried from step to step. `uses:` steps (checkout, setup-*,
  cache, artifacts) are the runner's and are skipped: the clone shares one dist/.

Skipped as well, and why: `bash ci/setup.sh` (this machine is set up; in a clone it
would reinstall the package from the clone), the cache wiring steps, and the cache
locations in the environment (the runner host's /var/cache; the test keeps this
machine's warm caches).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.registry_server import Registry

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "pipeline-pw-2c9f41aa"
CACHE_VARS = {"XDG_CACHE_HOME", "GOMODCACHE", "GOCACHE", "GOCACHE_VOLUME_DIR"}
SKIPPED_STEPS = ("Keep the builder", "Let the cache", "Set up")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    path = tmp_path_factory.mktemp("release-checkout") / "src"
    subprocess.run(["git", "clone", "-q", str(REPO), str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def secrets(checkout, tmp_path_factory):
    keys = tmp_path_factory.mktemp("pipeline-keys")
    env = dict(os.environ, COSIGN_PASSWORD=PASSWORD)
    done = subprocess.run(["inv", "image.keygen", "--out", str(keys)], cwd=checkout, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    reg = Registry(tmp_path_factory.mktemp("pipeline-registry")).start()
    yield {"host": reg.host, "cosign_key": (keys / "cosign.key").read_text(), "cosign_pub": (keys / "cosign.pub").read_text(),
           "cosign_password": PASSWORD, "registry_username": "", "registry_password": ""}
    reg.stop()


def run_script(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_BUILD_REGISTRY_", "COSIGN_"))}
    script = re.sub(r'sudo -E env "PATH=\$PATH" ', "", script)  # root already; sudo may be absent
    proc = subprocess.run(["sh", "-ec", script], cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"step failed ({proc.returncode}):\n{script}\n{proc.stderr[-4000:]}"
    return proc


def test_drone_release_pipeline_steps_in_order(checkout, secrets):
    secrets = {**secrets, "registry_repository": f"{secrets['host']}/acme/drone-release"}
    release = [d for d in yaml.safe_load_all((checkout / "ci/drone.yml").read_text()) if d and d["name"] == "release"][0]
    ran = []
    for step in release["steps"]:
        commands = [c for c in step["commands"] if c != "bash ci/setup.sh"]
        if not commands:
            continue
        env = {k: (secrets[v["from_secret"]] if isinstance(v, dict) else str(v))
               for k, v in (step.get("environment") or {}).items() if k not in CACHE_VARS}
        proc = run_script("\n".join(commands), env, checkout)
        ran.append(step["name"])
    assert ran == ["build-amd64", "build-arm64", "image", "push", "verify"]
    assert (checkout / "pushed.txt").read_text().startswith(secrets["registry_repository"] + "@sha256:")
    assert "FAIL" not in proc.stdout and "ok provenance" in proc.stdout


def _github_env(value: str, secrets: dict, matrix: dict, workspace: Path) -> str:
    def fill(match: re.Match) -> str:
        scope, name = match.group(1), match.group(2)
        if scope == "matrix":
            return matrix[name]
        if scope == "github":
            return {"workspace": str(workspace), "sha": "0" * 40, "ref_name": "v0.0.0-test"}[name]
        return secrets[name]
    return re.sub(r"\$\{\{\s*(secrets|vars|matrix|github)\.(\w+)\s*\}\}", fill, str(value))


def test_github_release_workflow_run_steps_in_order(checkout, secrets, tmp_path):
    named = {"REGISTRY_REPOSITORY": f"{secrets['host']}/acme/github-release", "COSIGN_KEY": secrets["cosign_key"],
             "COSIGN_PUB": secrets["cosign_pub"], "COSIGN_PASSWORD": PASSWORD, "REGISTRY_USERNAME": "", "REGISTRY_PASSWORD": ""}
    workflow = yaml.safe_load((checkout / "ci/github/release.yml").read_text())
    github_env = tmp_path / "github_env"
    matrix = json.loads(subprocess.run(["inv", "release.matrix", "--json"], cwd=checkout, capture_output=True, text=True,
                                       check=True).stdout)
    jobs = [(workflow["jobs"]["build"], {"arch": arch, "kubernetes": version})
            for version in matrix["kubernetes"] for arch in matrix["arch"]]
    jobs += [(workflow["jobs"]["release"], {"kubernetes": version}) for version in matrix["kubernetes"]]
    ran = []
    for job, matrix in jobs:
        for step in job["steps"]:
            if "run" not in step or step.get("name", "").startswith(SKIPPED_STEPS):
                continue
            carried = dict(line.split("=", 1) for line in github_env.read_text().splitlines()) if github_env.exists() else {}
            env = {k: _github_env(v, named, matrix, checkout) for k, v in (step.get("env") or {}).items()}
            env.update(carried, GITHUB_ENV=str(github_env), SPEC="examples/underlay/scheduler.yaml")
            proc = run_script(_github_env(step["run"], named, matrix, checkout), env, checkout)
            ran.append(step["name"])
    assert ran[-2:] == ["Push by digest, sign and attest", "Verify what was pushed"]
    assert "FAIL" not in proc.stdout and "ok provenance" in proc.stdout
