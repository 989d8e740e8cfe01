"""Provenance, both SBOM formats and the verifier's checks, without a registry.

The SBOMs are validated by the formats' own well-kept libraries: spdx-tools (the
SPDX 2.3 JSON schema and its semantic validator) and cyclonedx-python-lib's
strict JSON validator with the CycloneDX 1.6 schema.
"""

from __future__ import annotations

import json

import pytest

from scheduler_build.build import info as build_info
from scheduler_build.errors import UserError
from scheduler_build.image import cyclonedx, provenance, sbom
from scheduler_build.image.request import LABEL_PREFIX
from scheduler_build.publish import sign, verify

from tests.unit.image.test_oci import VERSION_M, record

PATCHED = dict(
    kubernetes=build_info.KubernetesInfo("1.36", "v1.36.3", "v1.36.3-acme.1", "1.26.0", module_sum="h1:k8s="),
    plugins=[build_info.PluginInfo("example.com/underlay", ["UnderlayIPLimit"], "path", path="plugins/underlay", sha256="ee" * 32),
             build_info.PluginInfo("example.com/mod", ["Mod"], "module", module="example.com/mod", version="v0.1.0")],
    patches=[build_info.PatchInfo("0001-fix.patch", "ff" * 32)],
)


def _predicate(info, **overrides):
    args = dict(platforms=["linux/arm64", "linux/amd64"], spec_sha256="12" * 32,
                source="https://git.example/acme/sched", revision="abc", epoch=1700000000)
    args.update(overrides)
    return provenance.predicate(info, **args)


def test_provenance_records_parameters_and_every_resolved_dependency():
    info = record(**PATCHED)
    statement = provenance.statement("acme/sched", "sha256:" + "01" * 32, _predicate(info))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    assert statement["subject"] == [{"name": "acme/sched", "digest": {"sha256": "01" * 32}}]
    definition = statement["predicate"]["buildDefinition"]
    assert definition["buildType"] == provenance.BUILD_TYPE
    assert definition["externalParameters"] == {
        "kubernetesVersion": "v1.36.3", "platforms": ["linux/amd64", "linux/arm64"], "versionSuffix": "-acme.1",
        "name": "kube-scheduler", "spec": {"digest": {"sha256": "12" * 32}},
        "source": {"uri": "https://git.example/acme/sched", "revision": "abc"}}
    deps = {d["name"]: d for d in definition["resolvedDependencies"]}
    assert deps["k8s.io/kubernetes"]["uri"] == "pkg:golang/k8s.io/kubernetes@v1.36.3"
    assert deps["k8s.io/kubernetes"]["annotations"]["go.sum"] == "h1:k8s="
    assert deps["example.com/underlay"]["digest"] == {"sha256": "ee" * 32}
    assert deps["example.com/mod"]["uri"] == "pkg:golang/example.com/mod@v0.1.0"
    assert deps["0001-fix.patch"]["digest"] == {"sha256": "ff" * 32}
    assert deps["builder-image"]["digest"] == {"sha256": "aa"} and deps["builder-image"]["annotations"]["go"] == "1.26.8"
    run = statement["predicate"]["runDetails"]
    assert run["builder"]["id"].startswith("pkg:pypi/scheduler-build@")
    assert run["metadata"]["startedOn"] == run["metadata"]["finishedOn"] == "2023-11-14T22:13:20Z"


def test_provenance_is_byte_identical_for_the_same_inputs_and_changes_with_them():
    one = provenance.dumps(provenance.statement("r", "sha256:" + "01" * 32, _predicate(record(**PATCHED))))
    two = provenance.dumps(provenance.statement("r", "sha256:" + "01" * 32, _predicate(record(**PATCHED))))
    assert one == two
    assert one != provenance.dumps(provenance.statement("r", "sha256:" + "01" * 32, _predicate(record(**PATCHED), epoch=1)))
    assert one != provenance.dumps(provenance.statement("r", "sha256:" + "01" * 32, _predicate(record())))


def _labels(info) -> dict[str, str]:
    return {f"{LABEL_PREFIX}.kubernetes.version": info.kubernetes.version, f"{LABEL_PREFIX}.binary.sha256": info.binary.sha256,
            f"{LABEL_PREFIX}.patches.digest": info.patch_series_digest, f"{LABEL_PREFIX}.go.version": "go1.26.8"}


def test_verifier_accepts_a_matching_statement_and_names_each_disagreement():
    info = record(**PATCHED)
    digest = "sha256:" + "01" * 32
    statement = provenance.statement("r", digest, _predicate(info))
    assert verify.provenance_problems(statement, digest, _labels(info), "linux/amd64") == []
    other = "sha256:" + "02" * 32
    assert "subject" in verify.provenance_problems(statement, other, _labels(info), "linux/amd64")[0]
    labels = {**_labels(info), f"{LABEL_PREFIX}.binary.sha256": "99" * 32}
    assert any("binarySha256" in p for p in verify.provenance_problems(statement, digest, labels, "linux/amd64"))
    assert any("platform" in p for p in verify.provenance_problems(statement, digest, _labels(info), "linux/arm64"))


def test_cyclonedx_sbom_validates_against_the_1_6_schema():
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    doc = cyclonedx.document("kube-scheduler", "ab" * 32, "v1.36.3", "linux/arm64", sbom.parse_version_m(VERSION_M), 0)
    text = cyclonedx.dumps(doc).decode()
    errors = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert errors is None, errors
    assert doc["specVersion"] == "1.6" and doc["metadata"]["timestamp"] == "1970-01-01T00:00:00Z"
    assert {c["name"] for c in doc["components"]} >= {"stdlib", "cel.dev/expr", "k8s.io/api", "github.com/spf13/cobra"}
    assert cyclonedx.dumps(doc) == cyclonedx.dumps(
        cyclonedx.document("kube-scheduler", "ab" * 32, "v1.36.3", "linux/arm64", sbom.parse_version_m(VERSION_M), 0))
    # The validator is real: a broken document fails it.
    broken = json.loads(text)
    broken["components"][0]["type"] = "not-a-type"
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(broken)) is not None


def test_spdx_sbom_validates_with_spdx_tools(tmp_path):
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    doc = sbom.document("kube-scheduler", "ab" * 32, "v1.36.3", "linux/arm64", sbom.parse_version_m(VERSION_M), 0)
    path = tmp_path / "kube-scheduler.spdx.json"
    path.write_bytes(sbom.dumps(doc))
    messages = validate_full_spdx_document(parse_file(str(path)))
    assert messages == [], [m.validation_message for m in messages]
    doc["relationships"][0]["relatedSpdxElement"] = "SPDXRef-nowhere"
    path.write_bytes(sbom.dumps(doc))
    assert validate_full_spdx_document(parse_file(str(path)))


def test_key_references_and_references_to_verify(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="no such file"):
        sign.key_ref(str(tmp_path / "cosign.key"), {})
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with pytest.raises(UserError, match="not set"):
        sign.key_ref("env://NOPE_KEY", {})
    monkeypatch.setenv("SOME_KEY", "pem")
    assert sign.key_ref("env://SOME_KEY", {"SOME_KEY": "pem"}) == "env://SOME_KEY"
    target, reference = verify.split_reference("127.0.0.1:5000/acme/sched@sha256:" + "01" * 32)
    assert (target.name, reference) == ("127.0.0.1:5000/acme/sched", "sha256:" + "01" * 32)
    assert verify.split_reference("127.0.0.1:5000/acme/sched:v1.36.3-0.1.0")[1] == "v1.36.3-0.1.0"
    with pytest.raises(UserError, match="no tag or digest"):
        verify.split_reference("127.0.0.1:5000/acme/sched")


def test_keygen_never_overwrites_a_key(tmp_path):
    (tmp_path / "cosign.key").write_text("mine")
    with pytest.raises(UserError, match="already exists"):
        sign.keygen(None, tmp_path)  # refused before cosign would run
    assert (tmp_path / "cosign.key").read_text() == "mine"


def test_binaries_built_elsewhere_must_come_from_the_same_inputs(tmp_path):
    from scheduler_build.image import request

    amd = request.PlatformInput("linux/amd64", "amd64", tmp_path / "a", record(**PATCHED))
    arm = request.PlatformInput("linux/arm64", "arm64", tmp_path / "b", record(**{**PATCHED, "platform": "linux/arm64"}))
    request.check_inputs_agree([amd, arm])
    other = request.PlatformInput("linux/arm64", "arm64", tmp_path / "b", record(platform="linux/arm64"))
    with pytest.raises(UserError, match="linux/arm64 was built with Kubernetes version v1.36.3 but linux/amd64 with v1.36.3-acme.1"):
        request.check_inputs_agree([amd, other])
    unpatched = request.PlatformInput("linux/arm64", "arm64", tmp_path / "b", record(platform="linux/arm64",
                                      kubernetes=PATCHED["kubernetes"], plugins=PATCHED["plugins"]))
    with pytest.raises(UserError, match="patch series"):
        request.check_inputs_agree([amd, unpatched])


def test_oci_archive_is_deterministic_and_checked_when_unpacked(tmp_path):
    import tarfile

    from scheduler_build.image import oci
    from scheduler_build.publish import archive

    from tests.unit.image.test_info import tiny_layout

    layout, info = tiny_layout(tmp_path / "layout")
    digest = info.index_digest
    image = layout.blob(digest)
    one, two = archive.write(layout.root, tmp_path / "a.tar", 1700000000), archive.write(layout.root, tmp_path / "b.tar", 1700000000)
    assert one.read_bytes() == two.read_bytes()
    with archive.extracted(one) as directory:
        assert oci.Layout(directory).read().index_digest == digest
    assert not directory.exists()  # the temporary layout is gone
    # A blob whose bytes no longer match its name is refused.
    with tarfile.open(tmp_path / "bad.tar", "w") as tar:
        tar.add(layout.root / "index.json", "index.json")
        tar.add(layout.root / "oci-layout", "oci-layout")
        (tmp_path / "evil").write_bytes(image + b" ")
        tar.add(tmp_path / "evil", f"blobs/sha256/{digest.split(':')[1]}")
    with pytest.raises(UserError, match="does not match its digest"):
        with archive.extracted(tmp_path / "bad.tar"):
            pass


def test_provenance_reads_back_typed_and_refuses_other_statements():
    info = record(**PATCHED)
    statement = provenance.statement("acme/sched", "sha256:" + "01" * 32, _predicate(info))
    recorded = provenance.Recorded.from_statement(statement)
    assert recorded.platforms == ["linux/amd64", "linux/arm64"] and recorded.spec_sha256 == "12" * 32
    assert (recorded.name, recorded.kubernetes_version, recorded.source_date_epoch) == ("kube-scheduler", "v1.36.3", 1700000000)
    del statement["predicate"]["buildDefinition"]["internalParameters"]["sourceDateEpoch"]
    with pytest.raises(UserError, match="missing or bad 'sourceDateEpoch'"):
        provenance.Recorded.from_statement(statement)
    foreign = provenance.statement("acme/sched", "sha256:" + "01" * 32, _predicate(info))
    foreign["predicate"]["buildDefinition"]["buildType"] = "https://example.com/other"
    with pytest.raises(UserError, match="buildType"):
        provenance.Recorded.from_statement(foreign)


def test_a_plugin_checked_out_at_another_path_agrees_and_other_content_does_not(tmp_path):
    from scheduler_build.image import request

    def platform(arch: str, path: str, sha256: str) -> request.PlatformInput:
        plugin = build_info.PluginInfo("example.com/underlay", ["UnderlayIPLimit"], "path", path=path, sha256=sha256)
        return request.PlatformInput(f"linux/{arch}", arch, tmp_path / arch,
                                     record(**{**PATCHED, "platform": f"linux/{arch}", "plugins": [plugin]}))

    # each job of a release checks the sources out at its own path: the content decides
    request.check_inputs_agree([platform("amd64", "/jobs/1/plugins/underlay", "ee" * 32),
                                platform("arm64", "/jobs/2/plugins/underlay", "ee" * 32)])
    with pytest.raises(UserError, match="was built with plugins"):  # negative control: other content
        request.check_inputs_agree([platform("amd64", "/jobs/1/plugins/underlay", "ee" * 32),
                                    platform("arm64", "/jobs/1/plugins/underlay", "ff" * 32)])
