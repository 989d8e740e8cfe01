"""The remote-engine tier (issue 19): everything through a Docker engine that cannot see the
caller's files. A second dockerd of the tests' own (testkit/remote_engine.py: own data
root, private mount namespace where the checkout, the cache directory and /tmp are empty,
tcp://127.0.0.1 only) is the engine of every `inv` run here, through DOCKER_HOST. It holds no
image but the builder, copied in from the machine's engine through the API (no pull).

Cost (cold): one kube-scheduler compile of the example spec in the test engine (its Go build
cache volume starts empty), a partial one for the plain build (the unpatched packages are in
that volume by then), one image layer, a retarget of a one-package module; the fault test starts a second engine and kills it
during the compile. These builds, in an engine with its own empty Go cache, compared byte for
byte with the local ones, are the suite's cold reproducibility check (test_build_integration
no longer repeats it with a second cold compile in the machine's engine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import docker
import docker.errors
import docker.types
import pytest

from conftest import REPO, TEST_K8S_MINOR
from scheduler_build import platforms, settings
from testkit import remote_engine
from testkit.registry_server import Registry

pytestmark = pytest.mark.remote_engine  # also integration, by its directory

SPEC = REPO / "examples/underlay/scheduler.yaml"


def inv(engine: remote_engine.RemoteEngine, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "invoke", "-r", str(REPO), *args], capture_output=True, text=True,
                          env=engine.env(), cwd=REPO, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"inv {' '.join(args)} through {engine.host} failed ({proc.returncode}):\n"
                             f"{proc.stderr[-4000:]}\n--- engine log:\n{engine.log()}")
    return proc


def _start_with_builder(builder: str) -> remote_engine.RemoteEngine:
    engine = remote_engine.start([REPO, settings.cache_dir()])
    try:
        remote_engine.load_image(engine, builder)
    except BaseException:
        remote_engine.stop(engine)
        raise
    return engine


@pytest.fixture(scope="module")
def remote(built_example_scheduler):
    """The test engine, with the builder image the local example build used."""
    engine = _start_with_builder(built_example_scheduler.info.builder.image)
    yield engine
    remote_engine.stop(engine)


@pytest.fixture(scope="module")
def cache_repo(tmp_path_factory):
    """A registry on 127.0.0.1 as the shared build cache: REPO for --cache-to / --cache-from."""
    registry = Registry(tmp_path_factory.mktemp("cache-registry")).start()
    yield registry, f"{registry.host}/acme/sb-cache"
    registry.stop()


@pytest.fixture(scope="module")
def remote_spec_build(remote, cache_repo, tmp_path_factory):
    """`inv build --spec --cache-to REPO` through the test engine: its Go build cache starts empty, so
    the snapshot it pushes holds this build's packages only."""
    dist = tmp_path_factory.mktemp("remote-dist")
    done = inv(remote, "build", "--spec", str(SPEC), "--dist", str(dist), "--no-pull", "--json", "--cache-to", cache_repo[1])
    return dist, json.loads(done.stdout), done.stderr


def test_the_test_engine_cannot_see_the_callers_files(remote):
    """The engine resolves host paths in its own mount namespace: there the checkout, the cache
    directory and /tmp are empty (a bind mount of them, made here by the test only, shows nothing)."""
    client = remote.client()
    image = next(iter(client.images.list()[0].tags))
    # Files only: a probe of a path inside another hidden one (a checkout under /tmp) leaves the engine
    # an empty directory for it, as a legacy `-v` bind of a missing source does.
    for path in (REPO, settings.cache_dir(), Path("/tmp")):
        assert any(Path(path).iterdir())  # not empty for the caller
        listing = client.containers.run(image, ["sh", "-c", "find /probe -mindepth 1 ! -type d | wc -l"], network_mode="none",
                                        volumes={str(path): {"bind": "/probe", "mode": "ro"}}, remove=True)
        assert listing.strip() == b"0", path
    # Negative control: what the toolkit did before issue 19, a bind mount of a cache entry, fails there
    # (the error; a legacy `-v` bind would instead create an empty directory in its place).
    entry = next(p for p in (settings.cache_dir() / "src").iterdir() if p.is_dir())
    with pytest.raises(docker.errors.APIError, match="bind source path does not exist"):
        client.containers.create(image, ["true"], mounts=[docker.types.Mount("/src", str(entry), type="bind")])


def test_build_spec_through_the_remote_engine_is_byte_identical(remote_spec_build, built_example_scheduler):
    """Local plugin and a patch, vendored tree as a workspace image, compiled in the remote engine."""
    _, info, _ = remote_spec_build
    local = built_example_scheduler.info
    assert info["patches"] and info["plugins"]
    assert info["binary"]["sha256"] == local.binary.sha256
    assert Path(info["binary"]["path"]).is_file()


def test_plain_build_through_the_remote_engine_is_byte_identical(remote, remote_spec_build, built_scheduler, tmp_path):
    done = inv(remote, "build", "--k8s-version", TEST_K8S_MINOR, "--dist", str(tmp_path), "--no-pull", "--json")
    assert json.loads(done.stdout)["binary"]["sha256"] == built_scheduler.info.binary.sha256


def test_validate_and_image_build_and_push_through_the_remote_engine(remote, remote_spec_build, tmp_path):
    dist, info, _ = remote_spec_build
    binary = info["binary"]["path"]
    checked = inv(remote, "config.validate", "--spec", str(SPEC), "--binary", binary, "--json")
    assert json.loads(checked.stdout)["ok"] is True
    host = f"linux/{platforms.host_arch()}"
    built = inv(remote, "image.build", "--spec", str(SPEC), "--dist", str(dist), "--platforms", host, "--json")
    assert json.loads(built.stdout)
    # The image.build loaded the image into the remote engine, not the local one.
    assert any("underlay-scheduler" in tag for image in remote.client().images.list() for tag in image.tags)
    registry = Registry(tmp_path / "registry").start()
    try:
        pushed = inv(remote, "image.push", "--registry", f"{registry.host}/acme/underlay-scheduler", "--spec", str(SPEC),
                     "--dist", str(dist), "--platforms", host, "--no-build")
        refs = pushed.stdout.split()
        assert refs and all("@sha256:" in ref for ref in refs)
    finally:
        registry.stop()


def test_plugin_retarget_through_the_remote_engine(remote, tmp_path):
    """`inv plugin.retarget` through the test engine: the module goes in vendored, as one archive into
    a volume of its own, apidiff's export data comes out through the archive API, and the volumes
    are removed. A tiny module (one apimachinery package, a planted type error) keeps it cheap;
    tests/unit/retarget/test_explain.py carries the full old-style fixture on the local engine."""
    module = tmp_path / "tiny"
    module.mkdir()
    (module / "go.mod").write_text("module example.com/tiny\n\ngo 1.24\n\nrequire k8s.io/apimachinery v0.35.4\n")
    (module / "tiny.go").write_text('package tiny\n\nimport "k8s.io/apimachinery/pkg/types"\n\nvar ID types.UID = 5\n')
    done = inv(remote, "plugin.retarget", "--path", str(module), "--k8s-version", TEST_K8S_MINOR, "--json", check=False)
    assert done.returncode == 1, done.stderr[-4000:]  # compiled in the engine: the planted error, nothing else
    result = json.loads(done.stdout)
    assert result["from"] == "v1.35.4" and result["compiles"] is False
    assert len(result["errors"]) == 1 and "types.UID" in result["errors"][0], done.stderr[-4000:]
    # apidiff -w ran in the engine on both releases and its export data came out
    assert "k8s.io/apimachinery/pkg/types: compared with the target" in done.stderr, done.stderr[-4000:]
    assert not [v for v in remote.client().volumes.list() if v.name.startswith("scheduler-build-retarget-")]


def test_a_fresh_worker_builds_from_the_registry_cache(remote_spec_build, cache_repo, built_example_scheduler, tmp_path):
    """A second empty engine with --cache-from: the workspace image is pulled, the Go build cache
    seeded from the pushed snapshot, and the binary is the same bytes."""
    _, _, pushed = remote_spec_build
    assert f"pushed {cache_repo[1]}:ws-" in pushed and f"pushed {cache_repo[1]}:gocache-" in pushed
    engine = _start_with_builder(built_example_scheduler.info.builder.image)
    try:
        done = inv(engine, "build", "--spec", str(SPEC), "--dist", str(tmp_path), "--no-pull", "--json",
                   "--cache-from", cache_repo[1])
    finally:
        remote_engine.stop(engine)
    assert "workspace image from the registry cache" in done.stderr and "Go build cache seeded" in done.stderr
    assert "building scheduler-build/workspace" not in done.stderr
    assert json.loads(done.stdout)["binary"]["sha256"] == built_example_scheduler.info.binary.sha256


def test_a_half_pushed_cache_entry_is_never_used(remote_spec_build, cache_repo):
    """A manifest whose layer blob is missing (a push cut short, a registry that lost a blob) is a
    miss: nothing is tagged, no Go cache volume is seeded, the build would go on without the cache."""
    import requests

    from scheduler_build import engine as engine_mod
    from scheduler_build.build import shared_cache
    from scheduler_build.build.workspace_image import KEY_LABEL

    registry, repo = cache_repo
    _, _, pushed = remote_spec_build
    key32 = pushed.split(f"pushed {repo}:ws-", 1)[1][:32]
    base = f"http://{registry.host}/v2/acme/sb-cache"
    manifest = requests.get(f"{base}/manifests/ws-{key32}", timeout=30, headers={
        "Accept": "application/vnd.docker.distribution.manifest.v2+json"}).json()
    config = requests.get(f"{base}/blobs/{manifest['config']['digest']}", timeout=30).json()
    key = config["config"]["Labels"][KEY_LABEL]
    layer = manifest["layers"][-1]["digest"].split(":", 1)[1]  # the vendored tree, under both entries
    blobs = list(registry.storage.rglob(f"blobs/sha256/{layer[:2]}/{layer}/data"))
    assert blobs
    for blob in blobs:
        blob.unlink()
    engine = remote_engine.start([REPO, settings.cache_dir()])
    saved = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = engine.host
    try:
        api = engine_mod.connect()
        assert api.in_registry(shared_cache.ref(repo, "ws", key))  # the tag is there ...
        assert not shared_cache.pull_workspace(api, repo, key)  # ... and never used
        assert not shared_cache.seed_gocache(api, repo, key, "scheduler-build-gocache")
        client = engine.client()
        assert client.images.list() == [] and client.volumes.list() == []
    finally:
        os.environ.pop("DOCKER_HOST")
        if saved is not None:
            os.environ["DOCKER_HOST"] = saved
        remote_engine.stop(engine)


def test_engine_killed_mid_build_is_one_clear_error_and_leaves_nothing(built_example_scheduler, tmp_path):
    engine = _start_with_builder(built_example_scheduler.info.builder.image)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "invoke", "-r", str(REPO), "build", "--spec", str(SPEC),
                                 "--dist", str(tmp_path / "dist"), "--no-pull"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=engine.env(), cwd=REPO)
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("+ go build"):
                time.sleep(2)  # the compile is running in the engine
                remote_engine.kill(engine)
                break
        rest = proc.communicate(timeout=600)[1]
    finally:
        remote_engine.stop(engine)
    stderr = "".join(seen) + rest
    assert any(line.startswith("+ go build") for line in seen), stderr[-3000:]
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    last = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert last and "Docker engine" in last[-1], stderr[-3000:]
    # Nothing half-made: no published binary, no staging directory. (No compile record either: whether
    # a binary must be copied out is decided from its Go build ID against the published one.)
    assert not [p for p in (tmp_path / "dist").rglob("*") if p.is_file()]
    assert remote_engine.leftovers(engine) == []


def test_teardown_leaves_no_process_mount_interface_or_file():
    engine = remote_engine.start([REPO, settings.cache_dir()])
    assert remote_engine.leftovers(engine)  # negative control: a running engine is seen
    remote_engine.stop(engine)
    assert remote_engine.leftovers(engine) == []
    assert not os.path.exists(engine.root)
