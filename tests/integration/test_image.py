"""image.build / image.push against the real engine, Go toolchain, qemu-user and a real registry.

Nothing is mocked: the binaries come from real builds (the native one shared with
the other integration tests, one arm64 cross build shared by this module), the
registry is Debian's docker-registry started on 127.0.0.1, the engine is the
machine's dockerd.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from testkit import docker_sdk
from scheduler_build import platforms
from scheduler_build.engine import connect
from scheduler_build.build import elf
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.publish import distribution, registry
from scheduler_build.errors import UserError

from conftest import build_request
from testkit.registry_server import Registry


REPO = Path(__file__).resolve().parents[2]
TEST_REPOSITORY = "scheduler-build-test/kube-scheduler"
SECRET = "pw-5f3c9e1d-never-print-me"


def _other_arch() -> str:
    return "arm64" if platforms.host_arch() == "amd64" else "amd64"


@pytest.fixture(scope="session")
def multiarch(built_scheduler):
    """dist/ holding the shared native build plus one cross build (the expensive part, done once)."""
    from scheduler_build.build import pipeline as build

    dist = built_scheduler.binary.parents[3]
    other = build.run(build_request(dist, arch=_other_arch()))
    return {"dist": dist, "native": built_scheduler, "other": other, "epoch": str(built_scheduler.info.source_date_epoch)}


@pytest.fixture(scope="session")
def release_repo(tmp_path_factory) -> Path:
    """A small git repository to run the tasks in: its commit names the -g<sha> tag and the
    revision label. (The project's own tree changes under parallel work; this one holds still.)"""
    path = tmp_path_factory.mktemp("release-repo")
    (path / "README").write_text("release checkout\n")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", f"https://bot:{SECRET}@git.example.invalid/acme/sched.git"], cwd=path, check=True)
    subprocess.run(["git", "add", "README"], cwd=path, check=True)
    subprocess.run(["git", *ident, "commit", "-q", "-m", "release"], cwd=path, check=True)
    return path


_CWD: list[Path] = []


def inv(*args: str, env: dict | None = None, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_BUILD_REGISTRY_")}
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "invoke", "-r", str(REPO), *args], capture_output=True, text=True, env=full_env, cwd=cwd or _CWD[0])
    if check and proc.returncode != 0:
        raise AssertionError(f"inv {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def build_args(multiarch, *extra: str) -> list[str]:
    wanted = f"linux/{platforms.host_arch()},linux/{_other_arch()}"
    return ["--no-spec", "--dist", str(multiarch["dist"]), "--platforms", wanted, "--repository", TEST_REPOSITORY, *extra]


@pytest.fixture(scope="session")
def built_images(multiarch, release_repo):
    _CWD[:] = [release_repo]
    env = {"SOURCE_DATE_EPOCH": multiarch["epoch"]}
    proc = inv("image.build", *build_args(multiarch, "--json"), env=env)
    result = json.loads(proc.stdout)
    yield {**multiarch, "result": result, "layout": Path(result["layout"]), "env": env, "stderr": proc.stderr}
    # Each session's release repository has a new commit, hence new -g<sha> tags: drop them all.
    client = docker_sdk.client()
    for img in client.images.list(name=TEST_REPOSITORY):
        client.images.remove(img.id, force=True)


@pytest.fixture
def plain_registry(tmp_path):
    reg = Registry(tmp_path / "registry").start()
    yield reg
    reg.stop()


def pull_by_digest(client, reference: str, auth: dict | None = None) -> None:
    """docker-py reports pull failures inside the stream, not as exceptions: look for them."""
    repo, digest = reference.split("@")
    for chunk in client.api.pull(repo, tag=digest, stream=True, decode=True, auth_config=auth):
        if "error" in chunk or "errorDetail" in chunk:
            raise AssertionError(f"pull of {reference} failed: {chunk}")


def layer_members(layout: Path, manifest_digest: str) -> dict[str, tarfile.TarInfo]:
    manifest = json.loads((layout / "blobs/sha256" / manifest_digest.split(":")[1]).read_bytes())
    layer = layout / "blobs/sha256" / manifest["layers"][0]["digest"].split(":")[1]
    with tarfile.open(layer) as tar:
        return {m.name: m for m in tar.getmembers()}


def test_multiarch_images_sboms_and_cross_binary(built_images):
    layout, result = built_images["layout"], built_images["result"]
    assert [p["platform"] for p in result["platforms"]] == [f"linux/{platforms.host_arch()}", f"linux/{_other_arch()}"]
    assert all("+" not in tag for tag in result["tags"])
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=_CWD[0], capture_output=True, text=True).stdout.strip()
    assert result["tags"][1].endswith(f"-g{sha[:7]}")

    other = built_images["other"]
    info = elf.inspect(other.binary.read_bytes())
    assert info.arch == _other_arch() and info.is_static
    qemu = platforms.ARCHES[_other_arch()].qemu
    out = subprocess.run([shutil.which(qemu), str(other.binary), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and other.info.kubernetes.version in out.stdout

    client = docker_sdk.client()
    native_tag = f"{TEST_REPOSITORY}:{result['tags'][0]}"
    image = client.images.get(native_tag)
    assert image.id == result["platforms"][0]["image_id"]
    config = image.attrs["Config"]
    assert config["User"] == "65532:65532" and config["Entrypoint"] == ["/usr/local/bin/kube-scheduler"]
    labels = config["Labels"]
    k8s_version = built_images["native"].info.kubernetes.version
    assert labels["org.scheduler-build.kubernetes.version"] == k8s_version
    assert labels["org.scheduler-build.go.version"].startswith("go1.")
    assert labels["org.scheduler-build.patches.digest"].startswith("sha256:")
    for key in ("source", "revision", "version", "created", "title", "licenses"):
        assert labels[f"org.opencontainers.image.{key}"]
    assert labels["org.opencontainers.image.revision"] == sha
    # The remote's credentials are stripped before the URL becomes a label.
    assert labels["org.opencontainers.image.source"] == "https://git.example.invalid/acme/sched.git"
    ran = client.containers.run(native_tag, ["--version"], network_mode="none", remove=True)
    assert k8s_version in ran.decode()
    arm = client.images.get(f"{TEST_REPOSITORY}:{result['tags'][0]}-{_other_arch()}")
    assert arm.attrs["Architecture"] == _other_arch()

    for p in result["platforms"]:
        members = layer_members(layout, p["manifest_digest"])
        assert set(members) == {"etc", "etc/group", "etc/passwd", "etc/ssl", "etc/ssl/certs", "etc/ssl/certs/ca-certificates.crt",
                                "tmp", "usr", "usr/local", "usr/local/bin", "usr/local/bin/kube-scheduler"}
        assert members["etc/ssl/certs/ca-certificates.crt"].size == Path("/etc/ssl/certs/ca-certificates.crt").stat().st_size
        sbom = json.loads(Path(p["sbom"]).read_text())
        assert Path(p["sbom"]).parent.name == f"linux-{p['platform'].split('/')[1]}"
        purls = {r["referenceLocator"] for pkg in sbom["packages"] for r in pkg["externalRefs"]}
        assert f"pkg:golang/k8s.io/kubernetes@{k8s_version}" in purls
        assert any(purl.startswith("pkg:golang/k8s.io/client-go@") for purl in purls)
        # Image overhead over the binary: CA bundle, passwd, group and tar headers.
        overhead = image.attrs["Size"] - p["binary_size"]
        assert 0 < overhead <= 300 * 1024 or p["platform"] != f"linux/{platforms.host_arch()}"


def test_identical_build_is_skipped_and_force_reproduces(built_images):
    layout, result, env = built_images["layout"], built_images["result"], built_images["env"]
    again = inv("image.build", *build_args(built_images, "--json"), env=env)
    assert "up to date" in again.stderr and "image.assemble" not in again.stderr
    forced = json.loads(inv("image.build", *build_args(built_images, "--json", "--force"), env=env).stdout)
    assert forced["index_digest"] == result["index_digest"]
    assert [p["image_id"] for p in forced["platforms"]] == [p["image_id"] for p in result["platforms"]]
    # A different SOURCE_DATE_EPOCH is a different image: the comparison can fail.
    other_env = {"SOURCE_DATE_EPOCH": str(int(env["SOURCE_DATE_EPOCH"]) + 1)}
    shifted = json.loads(inv("image.build", *build_args(built_images, "--json"), env=other_env).stdout)
    assert shifted["index_digest"] != result["index_digest"]
    assert shifted["platforms"][0]["image_id"] != result["platforms"][0]["image_id"]
    back = json.loads(inv("image.build", *build_args(built_images, "--json"), env=env).stdout)
    assert back["index_digest"] == result["index_digest"]
    client = docker_sdk.client()
    assert client.images.get(f"{TEST_REPOSITORY}:{result['tags'][0]}").id == result["platforms"][0]["image_id"]
    assert layout.exists()


def test_push_plain_http_index_sbom_and_reproducible_digest(built_images, plain_registry, tmp_path):
    result, env = built_images["result"], built_images["env"]
    target = f"{plain_registry.host}/acme/kube-scheduler"
    pushed = inv("image.push", "--registry", target, *build_args(built_images), env=env)
    refs = pushed.stdout.split()
    assert refs == [f"{target}@{result['index_digest']}"] + [f"{target}@{p['manifest_digest']}" for p in result["platforms"]]
    assert "error" not in pushed.stderr.lower()

    index = plain_registry.get(f"/v2/acme/kube-scheduler/manifests/{result['tags'][0]}", headers={"Accept": "application/vnd.oci.image.index.v1+json"})
    assert index.status_code == 200 and index.headers["Docker-Content-Digest"] == result["index_digest"]
    body = index.json()
    assert body["mediaType"] == "application/vnd.oci.image.index.v1+json"
    assert sorted(m["platform"]["architecture"] for m in body["manifests"]) == sorted([platforms.host_arch(), _other_arch()])
    for p in result["platforms"]:
        referrers = plain_registry.get(f"/v2/acme/kube-scheduler/manifests/{distribution.referrers_tag(p['manifest_digest'])}",
                                       headers={"Accept": "application/vnd.oci.image.index.v1+json"}).json()
        by_type = {e["artifactType"]: e for e in referrers["manifests"]}
        assert sorted(by_type) == ["application/spdx+json", "application/vnd.cyclonedx+json"]
        entry = by_type["application/spdx+json"]
        artifact = plain_registry.get(f"/v2/acme/kube-scheduler/manifests/{entry['digest']}",
                                      headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).json()
        assert artifact["subject"]["digest"] == p["manifest_digest"]
        sbom = plain_registry.get(f"/v2/acme/kube-scheduler/blobs/{artifact['layers'][0]['digest']}").json()
        assert sbom["spdxVersion"] == "SPDX-2.3" and sbom == json.loads(Path(p["sbom"]).read_text())

    # Referrers others listed at the tag-schema index (signatures, say) survive a re-push.
    first, second_platform = result["platforms"]
    rtag = f"/v2/acme/kube-scheduler/manifests/{distribution.referrers_tag(first['manifest_digest'])}"
    listing = plain_registry.get(rtag, headers={"Accept": "application/vnd.oci.image.index.v1+json"}).json()
    foreign = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": second_platform["sbom_manifest_digest"],
               "size": second_platform["sbom_manifest_size"] if "sbom_manifest_size" in second_platform else
               len(plain_registry.get(f"/v2/acme/kube-scheduler/manifests/{second_platform['sbom_manifest_digest']}",
                                      headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).content),
               "artifactType": "application/vnd.example.signature"}
    listing["manifests"].append(foreign)
    import requests

    put = requests.put(f"http://{plain_registry.host}{rtag}", data=json.dumps(listing),
                       headers={"Content-Type": "application/vnd.oci.image.index.v1+json"}, timeout=30)
    assert put.status_code == 201, put.text
    inv("image.push", "--registry", target, "--no-build", *build_args(built_images), env=env)
    kept = plain_registry.get(rtag, headers={"Accept": "application/vnd.oci.image.index.v1+json"}).json()["manifests"]
    assert sorted(e["artifactType"] for e in kept) == ["application/spdx+json", "application/vnd.cyclonedx+json",
                                                       "application/vnd.example.signature"]

    # The engine pulls what we pushed and sees the same image ID we built.
    client = docker_sdk.client()
    pull_by_digest(client, refs[1])
    assert client.images.get(refs[1]).id == result["platforms"][0]["image_id"]
    client.images.remove(refs[1], force=True)

    # Same inputs, a fresh registry: the same digests.
    second = Registry(tmp_path / "second").start()
    try:
        again = inv("image.push", "--registry", f"{second.host}/acme/kube-scheduler", "--no-build", *build_args(built_images), env=env)
        assert [r.split("@")[1] for r in again.stdout.split()] == [r.split("@")[1] for r in refs]
    finally:
        second.stop()


def test_push_auth_and_tls_never_leak_the_secret(built_images, tmp_path):
    result, env = built_images["result"], built_images["env"]
    reg = Registry(tmp_path / "secure", user="ci-bot", password=SECRET, tls=True).start()
    certs_dir = None
    outputs = []
    empty_config = tmp_path / "docker-empty"
    empty_config.mkdir()
    try:
        target = f"{reg.host}/acme/kube-scheduler"
        common = ["image.push", "--registry", target, "--no-build", *build_args(built_images)]
        base_env = {**env, "DOCKER_CONFIG": str(empty_config)}

        untrusted = inv(*common, env=base_env, check=False)
        outputs.append(untrusted)
        assert untrusted.returncode != 0 and "cannot talk TLS" in untrusted.stderr and "certs.d" in untrusted.stderr
        assert "Traceback" not in untrusted.stderr

        certs_dir = reg.trust_in_engine()
        anonymous = inv(*common, env=base_env, check=False)
        outputs.append(anonymous)
        assert anonymous.returncode != 0 and "requires authentication" in anonymous.stderr
        assert "retry" not in anonymous.stderr and "Traceback" not in anonymous.stderr

        wrong = inv(*common, env={**base_env, registry_auth.USER_ENV: "ci-bot", registry_auth.PASSWORD_ENV: SECRET + "x"}, check=False)
        outputs.append(wrong)
        assert wrong.returncode != 0 and "rejected the credentials" in wrong.stderr and "retry" not in wrong.stderr

        ok = inv(*common, env={**base_env, registry_auth.USER_ENV: "ci-bot", registry_auth.PASSWORD_ENV: SECRET})
        outputs.append(ok)
        assert ok.stdout.split()[0] == f"{target}@{result['index_digest']}"

        # The same through docker's config file (what `docker login` writes).
        import base64

        config_dir = tmp_path / "docker-login"
        config_dir.mkdir()
        (config_dir / "config.json").write_text(json.dumps({"auths": {reg.host: {"auth": base64.b64encode(f"ci-bot:{SECRET}".encode()).decode()}}}))
        via_config = inv(*common, env={**env, "DOCKER_CONFIG": str(config_dir)})
        outputs.append(via_config)
        assert via_config.stdout == ok.stdout

        client = docker_sdk.client()
        pull_by_digest(client, ok.stdout.split()[1], auth={"username": "ci-bot", "password": SECRET})
        saved = b"".join(client.images.get(ok.stdout.split()[1]).save())
        client.images.remove(ok.stdout.split()[1], force=True)
    finally:
        reg.stop()
        if certs_dir is not None:
            shutil.rmtree(certs_dir, ignore_errors=True)

    secret = SECRET.encode()
    for proc in outputs:
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
    assert secret not in saved
    for root in (built_images["layout"], built_images["dist"]):
        for path in Path(root).rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert secret not in path.read_bytes(), path
    local_save = b"".join(docker_sdk.client().images.get(f"{TEST_REPOSITORY}:{result['tags'][0]}").save())
    assert secret not in local_save


def _client_for(reg: Registry, **kwargs) -> distribution.Client:
    return distribution.Client(distribution.Target(reg.host, "acme/kube-scheduler"), **kwargs)


def test_registry_killed_mid_push_retries_then_succeeds(built_images, tmp_path):
    layout, result = built_images["layout"], built_images["result"]
    reg = Registry(tmp_path / "flaky").start()
    state = {"killed": False, "restarted": False, "retries": 0}

    def on_event(event: str, detail: str) -> None:
        # Kill the registry while the first big layer is half on the wire.
        if event == "bytes" and not state["killed"] and int(detail.rsplit(":", 1)[1]) >= 4 << 20:
            state["killed"] = True
            reg.kill()
        if event == "retry":
            state["retries"] += 1

    def sleep(seconds: float) -> None:
        if state["killed"] and not state["restarted"]:
            state["restarted"] = True
            reg.start()

    try:
        pushed = registry.push(layout, _client_for(reg, retries=3, backoff=0.1, on_event=on_event, sleep=sleep))
        assert state["killed"] and state["restarted"] and state["retries"] >= 1
        assert pushed.index_digest == result["index_digest"]
        index = reg.get(f"/v2/acme/kube-scheduler/manifests/{result['tags'][0]}", headers={"Accept": "application/vnd.oci.image.index.v1+json"})
        assert index.headers["Docker-Content-Digest"] == result["index_digest"]
        for p in result["platforms"]:
            manifest = reg.get(f"/v2/acme/kube-scheduler/manifests/{p['manifest_digest']}", headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).json()
            for desc in [manifest["config"], *manifest["layers"]]:
                blob = reg.get(f"/v2/acme/kube-scheduler/blobs/{desc['digest']}")
                assert blob.status_code == 200 and len(blob.content) == desc["size"]
    finally:
        reg.stop()


def test_registry_dead_mid_push_fails_clearly_and_tags_nothing(built_images, tmp_path):
    layout, result = built_images["layout"], built_images["result"]
    reg = Registry(tmp_path / "dead").start()
    sleeps: list[float] = []

    def on_event(event: str, detail: str) -> None:
        if event == "bytes":
            reg.kill()

    try:
        with pytest.raises(UserError) as err:
            registry.push(layout, _client_for(reg, retries=2, backoff=0.2, on_event=on_event, sleep=sleeps.append))
        assert "failed after 3 attempts" in str(err.value) and "nothing was tagged" in str(err.value)
        assert sleeps == [0.2, 0.4]
        reg.start()
        for tag in result["tags"]:
            missing = reg.get(f"/v2/acme/kube-scheduler/manifests/{tag}", headers={"Accept": "application/vnd.oci.image.index.v1+json"})
            assert missing.status_code == 404
        # The interrupted push left no tag; a new push completes it.
        assert registry.push(layout, _client_for(reg)).index_digest == result["index_digest"]
    finally:
        reg.stop()


def test_dockerfile_gives_the_same_image_as_the_assembly(built_images, tmp_path):
    """dockerfiles/scheduler.Dockerfile through the engine (streamed, in-band errors raise) vs our assembly."""
    layout, result = built_images["layout"], built_images["result"]
    native = result["platforms"][0]
    context = tmp_path / "context"
    (context / "rootfs").mkdir(parents=True)
    manifest = json.loads((layout / "blobs/sha256" / native["manifest_digest"].split(":")[1]).read_bytes())
    with tarfile.open(layout / "blobs/sha256" / manifest["layers"][0]["digest"].split(":")[1]) as tar:
        tar.extractall(context / "rootfs", filter="fully_trusted")  # our own layer; "tar" would drop the sticky bit of /tmp
    shutil.copy2(REPO / "dockerfiles" / "scheduler.Dockerfile", context / "Dockerfile")
    client = docker_sdk.client()
    assembled = client.images.get(native["image_id"])
    lines: list[str] = []
    tag = "scheduler-build-test/dockerfile-equivalence:latest"
    built_id = connect().build(context, tag, labels=assembled.attrs["Config"]["Labels"], on_line=lines.append)
    try:
        assert any("Step" in line for line in lines)
        dockerfile_cfg = client.images.get(built_id).attrs["Config"]
        for key in ("User", "Entrypoint", "Env", "Labels"):
            assert dockerfile_cfg[key] == assembled.attrs["Config"][key], key
        assert (dockerfile_cfg.get("WorkingDir") or "/") == assembled.attrs["Config"]["WorkingDir"]

        def files(image_id: str) -> dict[str, tuple[int, int]]:
            container = client.containers.create(image_id)
            try:
                data = b"".join(container.export())
            finally:
                container.remove()
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                return {m.name.rstrip("/"): (m.size, m.mode & 0o7777) for m in tar.getmembers()
                        if not m.name.startswith((".dockerenv", "dev", "proc", "sys", "etc/hosts", "etc/hostname", "etc/resolv.conf", "etc/mtab"))}

        assert files(built_id) == files(native["image_id"])
        # An in-band build error raises instead of passing silently.
        (context / "Dockerfile").write_text("FROM scratch\nCOPY does-not-exist /\n")
        with pytest.raises(UserError, match="docker build"):
            connect().build(context, tag + "-broken", on_line=lines.append)
    finally:
        client.images.remove(tag, force=True)


def test_extender_image_on_a_bootstrapped_python_base_runs_non_root(tmp_path):
    """Debian via debootstrap (cached under ~/.cache/scheduler-build/rootfs), the extender, uid 65532."""
    import time
    import urllib.request

    from testkit.registry_server import free_port

    tag = "scheduler-build-test/extender:latest"
    proc = inv("image.extender", "--tag", tag, "--force", cwd=REPO)
    assert proc.stdout.strip() == tag
    client = docker_sdk.client()
    image = client.images.get(tag)
    assert image.attrs["Config"]["User"] == "65532:65532"
    assert "pull" not in proc.stderr.lower()
    # The build asserts it too (its RUN step fails otherwise): the image's Python serves through OneWrite.
    probe = "from scheduler_build.extender.one_write import http_protocol; print(http_protocol().__name__)"
    served = client.containers.run(tag, entrypoint=["/usr/bin/python3", "-c", probe], network_mode="none", remove=True)
    assert served.decode().strip() == "OneWriteHttpToolsProtocol"
    ident = client.containers.run(tag, entrypoint=["/usr/bin/id", "-u"], network_mode="none", remove=True)
    assert ident.decode().strip() == "65532"
    # Only the extender's own code ships: no test fixtures, no build or deploy stages.
    listing = client.containers.run(tag, entrypoint=["/usr/bin/find", "/opt/extender/scheduler_build", "-name", "*.py"],
                                    network_mode="none", remove=True).decode().split()
    shipped = sorted(path.removeprefix("/opt/extender/scheduler_build/") for path in listing)
    package = REPO / "scheduler_build"
    from scheduler_build.image.extender import EXTENDER_FILES  # __init__, errors and the extender's config leaf

    expected = sorted([*EXTENDER_FILES] + [f"extender/{p.name}" for p in (package / "extender").glob("*.py")])
    assert shipped == expected
    assert not [p for p in shipped if p.endswith(("apistub.py", "samples.py", "harness.py", "e2e.py"))]
    port = free_port()
    container = client.containers.run(tag, ["--port", "8888"], detach=True, ports={"8888/tcp": ("127.0.0.1", port)})
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            try:
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status
                break
            except OSError:
                time.sleep(0.3)
        assert status == 200, container.logs()[-2000:]
    finally:
        container.remove(force=True)
        client.images.remove(tag, force=True)


def _packaged_labels(build_result, tmp_path: Path, **options) -> tuple[dict, dict]:
    """Package one build (copied into its own dist/) with the image stage; (labels, build-info) of the image."""
    from scheduler_build import settings
    from scheduler_build.image import assemble, oci
    from scheduler_build.image import request as image_request

    host = platforms.host_arch()
    platform_dir = build_result.binary.parent
    dist = tmp_path / "dist"
    shutil.copytree(platform_dir, dist / platform_dir.relative_to(platform_dir.parents[2]))
    from invoke import Config, Context

    from scheduler_build.inputs import image as image_inputs

    context = Context(config=Config(defaults=settings.DEFAULTS))
    opts = image_inputs.image_inputs(context, platforms=f"linux/{host}", dist=dist, no_spec="spec" not in options, **options)
    request = image_request.prepare(image_request.plan(opts, host))
    result = assemble.build(request, host)
    layout = oci.Layout(result.layout)
    manifest = layout.json_blob(result.platforms[0].manifest_digest)
    return layout.json_blob(manifest["config"]["digest"])["config"]["Labels"], request.inputs[0].build_info


def test_patches_label_is_the_patch_series_digest(built_example_scheduler, built_scheduler, tmp_path):
    """The example spec (plugin + patch) packaged: the label is its series' digest, not the empty series'."""
    import hashlib

    key = "org.scheduler-build.patches.digest"
    spec = REPO / "examples/underlay/scheduler.yaml"
    labels, info = _packaged_labels(built_example_scheduler, tmp_path / "patched", spec=str(spec))
    patch = REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"
    series = f"{patch.name}\0{hashlib.sha256(patch.read_bytes()).hexdigest()}\n".encode()
    expected = "sha256:" + hashlib.sha256(series).hexdigest()
    assert labels[key] == expected == info.patch_series_digest
    assert json.loads(built_example_scheduler.build_info.read_text())["patch_series_digest"] == expected

    plain_labels, _ = _packaged_labels(built_scheduler, tmp_path / "plain",
                                       k8s_version=built_scheduler.info.kubernetes.version)
    assert plain_labels[key] == "sha256:" + hashlib.sha256(b"").hexdigest()
    assert plain_labels[key] != labels[key]
