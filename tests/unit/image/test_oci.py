"""Unit tests for image assembly, SBOMs and the registry client's pure parts (no docker/go/network)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
from pathlib import Path

import pytest

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build import info as build_info
from scheduler_build.errors import UserError
from scheduler_build.image import assemble
from scheduler_build.image import layer
from scheduler_build.image import oci
from scheduler_build.image import request as image
from scheduler_build.image import sbom
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.publish import distribution

VERSION_M = """/x/kube-scheduler: go1.26.8
\tpath\tscheduler-build.local/wrapper
\tmod\tscheduler-build.local/wrapper\t(devel)\t
\tdep\tcel.dev/expr\tv0.25.1\t
\tdep\tk8s.io/api\tv0.0.0\t
\t=>\tk8s.io/api\tv0.36.3\th1:abc=
\tdep\tgithub.com/spf13/cobra\tv1.10.1\th1:def=
\tbuild\t-buildmode=exe
\tbuild\tCGO_ENABLED=0
\tbuild\tGOARCH=arm64
"""


def test_tags_are_semver_safe():
    assert image.tags_for("v1.36.3", "0.1.0", "abc1234", False) == ["v1.36.3-0.1.0", "v1.36.3-0.1.0-gabc1234"]
    assert image.tags_for("v1.36.3", "1.2.0-rc.1", "abc1234", True)[1] == "v1.36.3-1.2.0-rc.1-gabc1234-dirty"
    assert image.tags_for("v1.36.3", "0.1.0", "", False) == ["v1.36.3-0.1.0"]
    for tag in image.tags_for("v1.36.3", "0.1.0", "abc1234", True):
        assert "+" not in tag
    # The spec's image.tag replaces the base, the git tag still follows it.
    assert image.tags_for("v1.36.3", "0.1.0", "abc1234", False, "stable-1") == ["stable-1", "stable-1-gabc1234"]
    with pytest.raises(UserError, match="image.tag"):
        image.tags_for("v1.36.3", "0.1.0", "", False, "1.0+x")


@pytest.mark.parametrize("bad, words", [("1.0.0+build.5", "'+'"), ("1.02.0", "leading zero"), ("1..0", "alphanumerics"), ("", "alphanumerics"), ("1.0/x", "alphanumerics")])
def test_bad_spec_versions_name_the_problem(bad, words):
    with pytest.raises(UserError) as err:
        image.check_spec_version(bad)
    assert words in str(err.value)


def test_platforms_parse_and_reject():
    assert image.parse_platforms("linux/amd64, linux/arm64,linux/amd64") == [("linux/amd64", "amd64"), ("linux/arm64", "arm64")]
    assert image.parse_platforms("linux/arm64/v8") == [("linux/arm64", "arm64")]
    # One table (platforms.SUPPORTED): what no spec can name, the image stage refuses too.
    assert [p for p, _ in image.parse_platforms(",".join(platforms.SUPPORTED))] == list(platforms.SUPPORTED)
    for bad in ("windows/amd64", "linux/", "amd64", "linux/mips", "linux/riscv64", ","):
        with pytest.raises(UserError) as err:
            image.parse_platforms(bad)
        assert "--platforms" in str(err.value)


def test_remote_credentials_never_reach_labels():
    assert image.strip_userinfo("https://bot:ghp_secret@github.com/acme/x.git") == "https://github.com/acme/x.git"
    assert image.strip_userinfo("git@github.com:acme/x.git") == "git@github.com:acme/x.git"


def _entries(tmp_path: Path):
    binary = tmp_path / "kube-scheduler"
    binary.write_bytes(b"\x7fELF" + os.urandom(4096))
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    return layer.rootfs_entries(binary, "kube-scheduler", ca_bundle=ca)


def test_layer_is_deterministic_and_owned_right(tmp_path):
    entries = _entries(tmp_path)
    first = tmp_path / "a.tar.gz"
    second = tmp_path / "b.tar.gz"
    one = layer.write_compressed_layer(first, entries, 1700000000)
    os.utime(tmp_path / "kube-scheduler", (1, 1))  # host mtimes must not matter
    two = layer.write_compressed_layer(second, entries, 1700000000)
    assert one == two and first.read_bytes() == second.read_bytes()
    assert layer.write_compressed_layer(tmp_path / "c.tar.gz", entries, 1700000001)[0] != one[0]
    assert one[0] == "sha256:" + hashlib.sha256(gzip.decompress(first.read_bytes())).hexdigest()
    assert one[0] == layer.plain_layer(entries, 1700000000)[0]
    with tarfile.open(first) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == sorted(members)
    assert {m.mtime for m in members.values()} == {1700000000}
    assert members["usr/local/bin/kube-scheduler"].mode & stat.S_IXUSR
    assert {m.uid for m in members.values()} == {0} and members["tmp"].mode == 0o1777
    with tarfile.open(first) as tar:
        passwd = tar.extractfile("etc/passwd").read().decode()
        group = tar.extractfile("etc/group").read().decode()
    assert "nonroot:x:65532:65532:" in passwd and "nonroot:x:65532:" in group


def test_config_is_canonical_non_root_with_labels():
    labels = {"b": "2", "a": "1"}
    data = assemble.image_config("arm64", "sha256:00", 0, labels, "kube-scheduler")
    assert data == assemble.image_config("arm64", "sha256:00", 0, dict(reversed(list(labels.items()))), "kube-scheduler")
    config = json.loads(data)
    assert config["config"]["User"] == "65532:65532"
    assert config["config"]["Entrypoint"] == ["/usr/local/bin/kube-scheduler"]
    assert config["created"] == "1970-01-01T00:00:00Z" and config["variant"] == "v8"


def record(**overrides) -> build_info.BuildInfo:
    """A build record as build/pipeline.py writes it (the contract the image stage reads)."""
    fields = dict(
        scheduler_build="0.0.0", name="kube-scheduler", component="kube-scheduler", platform="linux/amd64",
        kubernetes=build_info.KubernetesInfo("1.36", "v1.36.3", "v1.36.3", "1.26.0", {"k8s.io/api": "v0.36.3"}),
        builder=build_info.BuilderInfo("golang:1.26", "sha256:aa", "1.26.8", "official"),
        vendor=build_info.VendorInfo("bb" * 32, "cc" * 32, True),
        flags=build_info.FlagsInfo(["go", "build"], "-s -w", {"CGO_ENABLED": "0"}, "none", False),
        source_date_epoch=1700000000,
        binary=build_info.BinaryInfo("/d/kube-scheduler", "dd" * 32, 10, True, "EXEC", "Kubernetes v1.36.3", "native"),
        host=build_info.HostInfo("x86_64", "3.12.0"),
    )
    fields.update(overrides)
    return build_info.BuildInfo(**fields)


def test_patch_digest_is_the_recorded_series_digest():
    empty = "sha256:" + hashlib.sha256(b"").hexdigest()
    assert build_info.series_digest([]) == empty
    assert image.patch_digest(record()) == empty  # an unpatched build: the labels of before, bit for bit
    series = [build_info.PatchInfo("0001-a.patch", "11" * 32, ["k8s.io/kubernetes"]),
              build_info.PatchInfo("0002-b.patch", "22" * 32, [])]
    expected = "sha256:" + hashlib.sha256(f"0001-a.patch\0{'11' * 32}\n0002-b.patch\0{'22' * 32}\n".encode()).hexdigest()
    patched = record(patches=series)
    assert patched.patch_series_digest == expected and image.patch_digest(patched) == expected
    assert build_info.series_digest(reversed(series)) != expected  # the order is part of the series
    # Written and read back through the one dataclass: the digest travels in build-info.json.
    data = json.loads(patched.to_json())
    assert data["patch_series_digest"] == expected and data["patches"][0]["file"] == "0001-a.patch"
    assert build_info.BuildInfo.from_dict(data) == patched


def test_build_info_round_trips_and_rejects_foreign_files(tmp_path):
    info = record(plugins=[build_info.PluginInfo("example.com/a/pkg/a", ["A"], "module", "example.com/a", version="v1.0.0")])
    path = info.write(tmp_path)
    assert path.name == "build-info.json" and build_info.BuildInfo.from_file(path) == info
    data = json.loads(path.read_text())
    # Each plugin carries only its source's keys, as before.
    assert data["plugins"] == [{"package": "example.com/a/pkg/a", "names": ["A"], "source": "module", "module": "example.com/a", "version": "v1.0.0"}]
    assert {"schema", "name", "component", "platform", "kubernetes", "builder", "vendor", "plugins", "patches", "flags",
            "source_date_epoch", "binary", "host", "phases_seconds", "duration_seconds"} <= set(data)
    del data["binary"]["sha256"]
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="build record"):
        build_info.BuildInfo.from_file(path)
    path.write_text(json.dumps({**info.to_dict(), "schema": 1}))  # before kubernetes.module_sum was recorded
    with pytest.raises(UserError, match="not a schema-2 build record; rebuild with `inv build`"):
        build_info.BuildInfo.from_file(path)
    path.write_text("{}")
    with pytest.raises(UserError, match="schema-2"):
        build_info.BuildInfo.from_file(path)
    with pytest.raises(UserError, match="unreadable"):
        build_info.BuildInfo.from_file(tmp_path / "missing.json")


def _inputs(cache: Path, **flags) -> image.Options:
    """The image task's inputs, decided as `inv image.build` decides them (default settings, this cache)."""
    from invoke import Config, Context

    from scheduler_build import settings
    from scheduler_build.inputs import image as image_inputs

    config = Config(defaults=settings.DEFAULTS, overrides={"paths": {"cache_dir": str(cache)}})
    return image_inputs.image_inputs(Context(config=config), **flags)


def test_missing_platform_names_the_build_command(tmp_path, monkeypatch):
    from scheduler_build.resolve import versions

    monkeypatch.setattr(versions, "resolve", lambda requested, cache: versions.Resolution(
        requested=requested, version="v1.36.3", minor="1.36", go_version="1.26.0", staging_version="v0.36.3"))
    opts = _inputs(tmp_path, no_spec=True, k8s_version="1.36", platforms="linux/amd64,linux/arm64", dist=tmp_path / "out")
    planned = image.plan(opts, "amd64")
    assert planned.missing() == [("linux/amd64", "amd64"), ("linux/arm64", "arm64")]
    with pytest.raises(UserError) as err:
        image.prepare(planned)
    assert "no linux/amd64 build of kube-scheduler v1.36.3" in str(err.value)
    assert f"inv build --no-spec --k8s-version 1.36 --dist {tmp_path / 'out'} --arch amd64" in err.value.hint
    spec = Path(__file__).resolve().parents[3] / "examples/underlay/scheduler.yaml"
    loaded = spec_mod.load(spec)
    assert image.plan(_inputs(tmp_path, spec=str(spec), dist="dist"), "amd64").build_command("arm64") == \
        f"inv build --spec {spec} --arch arm64"
    planned = image.plan(_inputs(tmp_path, spec=str(spec), platforms="linux/arm64", dist=tmp_path / "dist"), "amd64")
    # What dist/ holds is read through BuildInfo; an edited binary is refused.
    target = planned.platform_dir("arm64")
    target.mkdir(parents=True)
    (target / "kube-scheduler").write_bytes(b"binary")
    record(platform="linux/arm64", binary=build_info.BinaryInfo(str(target / "kube-scheduler"), hashlib.sha256(b"binary").hexdigest(),
                                                                  6, True, "EXEC", "", "qemu")).write(target)
    assert image.read_input(planned, "linux/arm64", "arm64").build_info.arch == "arm64"
    (target / "kube-scheduler").write_bytes(b"edited")
    with pytest.raises(UserError, match="does not match the sha256"):
        image.read_input(planned, "linux/arm64", "arm64")


def test_oci_layout_reads_what_it_wrote(tmp_path):
    lay = oci.Layout(tmp_path)
    manifest = oci.canonical({"schemaVersion": 2, "mediaType": oci.MANIFEST, "layers": []})
    index = oci.canonical({"schemaVersion": 2, "mediaType": oci.INDEX, "manifests": [oci.descriptor(oci.MANIFEST, manifest)]})
    artifact = oci.canonical({"mediaType": oci.MANIFEST, "subject": oci.descriptor(oci.MANIFEST, manifest)})
    for data in (manifest, index, artifact):
        lay.put(data)
    lay.write_index([{"mediaType": oci.INDEX, "digest": oci.digest_of(index), "size": len(index), "annotations": {oci.REF_NAME: t}}
                     for t in ("v1", "v1-gabc")]
                    + [{**oci.descriptor(oci.MANIFEST, artifact), "artifactType": sbom.MEDIA_TYPE}])
    contents = oci.Layout(tmp_path).read()
    assert contents.tags == ["v1", "v1-gabc"] and contents.index_digest == oci.digest_of(index)
    assert [m["digest"] for m in contents.manifests] == [oci.digest_of(manifest)]
    (ref,) = contents.referrers_of(oci.digest_of(manifest))
    assert ref.digest == oci.digest_of(artifact) and ref.artifact_type == sbom.MEDIA_TYPE
    with pytest.raises(UserError, match="missing blob"):
        lay.blob("sha256:" + "0" * 64)
    with pytest.raises(UserError, match="no built image"):
        oci.Layout(tmp_path / "nothing").read()


def test_sbom_from_go_version_m():
    info = sbom.parse_version_m(VERSION_M)
    assert info.go_version == "go1.26.8"
    assert [d.path for d in info.deps] == ["cel.dev/expr", "k8s.io/api", "github.com/spf13/cobra"]
    assert info.deps[1].replace == sbom.Module("k8s.io/api", "v0.36.3", "h1:abc=")
    doc = sbom.document("kube-scheduler", "ab" * 32, "v1.36.3", "linux/arm64", info, 0)
    assert doc["spdxVersion"] == "SPDX-2.3" and doc["creationInfo"]["created"] == "1970-01-01T00:00:00Z"
    purls = {ref["referenceLocator"] for p in doc["packages"] for ref in p["externalRefs"]}
    assert {"pkg:golang/cel.dev/expr@v0.25.1", "pkg:golang/github.com/spf13/cobra@v1.10.1", "pkg:golang/stdlib@go1.26.8"} <= purls
    ids = [p["SPDXID"] for p in doc["packages"]]
    assert len(ids) == len(set(ids))
    assert all(ch.isalnum() or ch in ".-" for i in ids for ch in i.removeprefix("SPDXRef-"))
    related = {r["relatedSpdxElement"] for r in doc["relationships"]}
    assert set(ids) <= related
    assert sbom.dumps(doc) == sbom.dumps(sbom.document("kube-scheduler", "ab" * 32, "v1.36.3", "linux/arm64", sbom.parse_version_m(VERSION_M), 0))


@pytest.mark.parametrize("text, words", [
    ("", "no registry"),
    ("https://r.example.com/x", "scheme"),
    ("r.example.com/x:v1", "tag or digest"),
    ("r.example.com/x@sha256:ab", "tag or digest"),
    ("acme/kube-scheduler", "HOST[:PORT]/REPO"),
    ("r.example.com/Acme", "not a valid name"),
    ("r.example.com", "HOST[:PORT]/REPO"),
])
def test_registry_target_errors(text, words):
    with pytest.raises(UserError) as err:
        distribution.parse_target(text)
    assert words in str(err.value)


def test_registry_target_ok():
    assert distribution.parse_target("127.0.0.1:5000/acme/kube-scheduler") == distribution.Target("127.0.0.1:5000", "acme/kube-scheduler")
    assert distribution.parse_target("localhost/x").host == "localhost"
    assert distribution.is_loopback("127.0.0.1:5000") and distribution.is_loopback("localhost:1") and not distribution.is_loopback("ghcr.io")
    assert distribution.referrers_tag("sha256:ab12") == "sha256-ab12"


def test_credentials_env_then_docker_config_then_helper(tmp_path, monkeypatch):
    monkeypatch.delenv(registry_auth.USER_ENV, raising=False)
    monkeypatch.delenv(registry_auth.PASSWORD_ENV, raising=False)
    config = tmp_path / "config.json"
    import base64

    config.write_text(json.dumps({"auths": {"r.example.com": {"auth": base64.b64encode(b"alice:s3cret").decode()}}}))
    assert registry_auth.credentials("r.example.com", str(config)) == ("alice", "s3cret")
    assert registry_auth.credentials("other.example.com", str(config)) is None
    # A real credential helper executable on PATH, as `docker login` uses them.
    helper = tmp_path / "bin" / "docker-credential-fake"
    helper.parent.mkdir()
    helper.write_text('#!/bin/sh\nread host\necho "{\\"Username\\":\\"bob\\",\\"Secret\\":\\"h3lper-$host\\"}"\n')
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{helper.parent}:{os.environ['PATH']}")
    config.write_text(json.dumps({"credHelpers": {"h.example.com": "fake"}}))
    assert registry_auth.credentials("h.example.com", str(config)) == ("bob", "h3lper-h.example.com")
    monkeypatch.setenv(registry_auth.USER_ENV, "env-user")
    monkeypatch.setenv(registry_auth.PASSWORD_ENV, "env-pass")
    assert registry_auth.credentials("h.example.com", str(config)) == ("env-user", "env-pass")
    monkeypatch.delenv(registry_auth.PASSWORD_ENV)
    with pytest.raises(UserError, match="only one of"):
        registry_auth.credentials("h.example.com", str(config))


def test_retry_is_bounded_with_backoff_and_auth_is_final():
    import requests

    sleeps: list[float] = []
    client = distribution.Client(distribution.Target("127.0.0.1:1", "x"), retries=3, backoff=0.5, sleep=sleeps.append)
    calls = []

    def refused():
        calls.append(1)
        raise requests.exceptions.ConnectionError("[Errno 111] Connection refused")

    with pytest.raises(UserError) as err:
        client._retrying("upload", refused)
    assert len(calls) == 4 and sleeps == [0.5, 1.0, 2.0]
    assert "after 4 attempts" in str(err.value) and "Connection refused" in str(err.value)

    calls.clear()

    def denied():
        calls.append(1)
        raise distribution.AuthFailed("denied")

    with pytest.raises(distribution.AuthFailed):
        client._retrying("upload", denied)
    assert len(calls) == 1


def test_reporting_reader_has_length_and_reports():
    seen = []
    reader = distribution._ReportingReader(io.BytesIO(b"x" * 10), 10, seen.append)
    assert len(reader) == 10
    assert reader.read(4) == b"xxxx" and reader.read() == b"xxxxxx" and reader.read() == b""
    assert seen == [4, 10]


def test_streamed_archive_holds_the_layer_the_config_names(tmp_path):
    """What the Preloader streams to `docker load`: the uncompressed layer (the same bytes the
    layout's gzip holds, so the engine's diff_id check passes), the config and manifest.json."""
    from scheduler_build.image.assemble import EarlyImage
    from scheduler_build.publish import daemon

    entries = _entries(tmp_path)
    diff_id, size = layer.plain_layer(entries, 1700000000)
    _, _, _ = layer.write_compressed_layer(tmp_path / "l.tar.gz", entries, 1700000000)
    config = b'{"rootfs":{"diff_ids":["' + diff_id.encode() + b'"]}}'
    image_ = EarlyImage("linux/amd64", config, oci.digest_of(config), entries, 1700000000, size, ["r/x:1", "r/x:1-amd64"])
    out = io.BytesIO()
    daemon.streamed_archive(out, image_)
    out.seek(0)
    with tarfile.open(fileobj=out) as tar:
        names = tar.getnames()
        layer_bytes = tar.extractfile("layer.tar").read()
        manifest = json.loads(tar.extractfile("manifest.json").read())
        stored_config = tar.extractfile(manifest[0]["Config"]).read()
    assert names == ["layer.tar", oci.digest_of(config).split(":")[1] + ".json", "manifest.json"]
    assert layer_bytes == gzip.decompress((tmp_path / "l.tar.gz").read_bytes())
    assert "sha256:" + hashlib.sha256(layer_bytes).hexdigest() == diff_id and len(layer_bytes) == size
    assert stored_config == config and manifest[0]["RepoTags"] == ["r/x:1", "r/x:1-amd64"]
