"""Both SBOMs and the provenance from a `go version -m` sample shaped like the example's build (unit level).

The judges here are the formats' own libraries and the NTIA checker (pure Python);
tests/integration/test_sbom_judges.py runs every judge on a real build's outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_build import spec as spec_mod
from scheduler_build.build import info as build_info
from scheduler_build.image import cyclonedx, gomodules, provenance, sbom
from scheduler_build.image import request as image_request
from scheduler_build.spec.model import Party

from tests.unit.image.test_oci import record

# A patched Kubernetes and a local plugin (both replaced by directories), a staging module the wrapper
# pins by `replace` (v0.0.0 => v0.36.3), a module replaced by a fork, a plain dependency.
VERSION_M = """/x/kube-scheduler: go1.26.8
\tpath\tscheduler-build.local/wrapper
\tmod\tscheduler-build.local/wrapper\t(devel)\t
\tdep\texample.com/acme/underlay\tv0.0.0-00010101000000-000000000000\t
\t=>\t../../plugin-modules/c03a6baef07ea2eb050b2095b24d71ed\t(devel)\t
\tdep\tgithub.com/spf13/cobra\tv1.10.1\th1:def=
\tdep\tgopkg.in/yaml.v3\tv3.0.1\t
\t=>\tgithub.com/acme/yaml\tv3.0.2-acme\th1:fork=
\tdep\tk8s.io/cloud-provider\tv0.0.0\t
\t=>\tk8s.io/cloud-provider\tv0.36.3\th1:cp=
\tdep\tk8s.io/kubernetes\tv1.36.3\t
\t=>\t../../patched/c65de39e26f909549f1fad8705e49053/k8s.io_kubernetes\t\t
\tbuild\tCGO_ENABLED=0
\tbuild\tGOARCH=amd64
"""
PATCH_TEXT = "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1 +1 @@\n-a\n+b\n"
ACME = Party("Acme Corp", "sbom@acme.example.com", "https://acme.example.com")
INPUTS = gomodules.SbomInputs(
    supplier=ACME, author=Party("Acme Platform Team", "platform@acme.example.com"),
    patches=(gomodules.Patch("0001-x.patch", "ff" * 32, "../patches/0001-x.patch", PATCH_TEXT, ("k8s.io/kubernetes",)),))


def _docs(inputs=INPUTS):
    info = sbom.parse_version_m(VERSION_M)
    args = ("kube-scheduler", "ab" * 32, "v1.36.3", "linux/amd64", info, 0, inputs)
    return sbom.document(*args), cyclonedx.document(*args)


def _packages(spdx: dict) -> dict[str, dict]:
    return {p["name"]: p for p in spdx["packages"]}


def test_replaced_modules_carry_the_compiled_version_and_the_original_in_a_property():
    spdx, cdx = _docs()
    purls = {r["referenceLocator"] for p in spdx["packages"] for r in p["externalRefs"]}
    assert "pkg:golang/k8s.io/cloud-provider@v0.36.3" in purls and not any(p.endswith("@v0.0.0") for p in purls)
    assert "pkg:golang/github.com/acme/yaml@v3.0.2-acme" in purls  # a fork: its own path and version
    assert {c["purl"] for c in cdx["components"]} == purls - {spdx["packages"][0]["externalRefs"][0]["referenceLocator"]}
    provider = next(c for c in cdx["components"] if c["name"] == "k8s.io/cloud-provider")
    assert {"name": "go:originalVersion", "value": "v0.0.0"} in provider["properties"]
    fork = next(c for c in cdx["components"] if c["name"] == "github.com/acme/yaml")
    assert {"name": "go:originalPath", "value": "gopkg.in/yaml.v3"} in fork["properties"]
    annotations = [a["comment"] for a in _packages(spdx)["k8s.io/cloud-provider"]["annotations"]]
    assert annotations == ["go:originalVersion=v0.0.0"]
    # Directory replacements keep the module's own path and version (the directory is the builder's).
    assert "pkg:golang/k8s.io/kubernetes@v1.36.3" in purls
    assert not any("plugin-modules" in json.dumps(d) or "patched/" in json.dumps(d) for d in (spdx, cdx))


def test_every_component_names_a_supplier_ours_from_the_spec_others_from_the_host():
    spdx, cdx = _docs()
    suppliers = {p["name"]: p["supplier"] for p in spdx["packages"]}
    assert suppliers["kube-scheduler"] == suppliers["example.com/acme/underlay"] == "Organization: Acme Corp (sbom@acme.example.com)"
    assert suppliers["scheduler-build.local/wrapper"] == suppliers["kube-scheduler"]
    assert suppliers["k8s.io/kubernetes"] == "Organization: k8s.io"  # patched, still upstream's
    assert suppliers["github.com/spf13/cobra"] == "Organization: github.com/spf13"
    assert suppliers["stdlib"] == "Organization: golang.org"
    by_name = {c["name"]: c for c in cdx["components"]}
    assert by_name["github.com/spf13/cobra"]["supplier"] == {"name": "github.com/spf13", "url": ["https://github.com/spf13"]}
    assert cdx["metadata"]["supplier"]["contact"] == [{"email": "sbom@acme.example.com"}]
    assert cdx["metadata"]["authors"] == [{"name": "Acme Platform Team", "email": "platform@acme.example.com"}]
    assert spdx["creationInfo"]["creators"][1] == "Organization: Acme Platform Team (platform@acme.example.com)"
    # Without a spec: every supplier from a host, still none missing.
    plain, _ = _docs(gomodules.SbomInputs())
    assert all(p["supplier"].startswith("Organization: ") for p in plain["packages"])


def test_the_patched_kubernetes_has_a_pedigree_and_patch_applied_files():
    spdx, cdx = _docs()
    k8s = next(c for c in cdx["components"] if c["name"] == "k8s.io/kubernetes")
    assert k8s["pedigree"]["ancestors"] == [{"type": "library", "name": "k8s.io/kubernetes", "version": "v1.36.3",
                                             "purl": "pkg:golang/k8s.io/kubernetes@v1.36.3"}]
    assert k8s["pedigree"]["patches"] == [{"type": "unofficial", "diff": {
        "text": {"contentType": "text/x-diff", "content": PATCH_TEXT}, "url": "../patches/0001-x.patch"}}]
    assert [c["name"] for c in cdx["components"] if "pedigree" in c] == ["k8s.io/kubernetes"]
    [patch_file] = spdx["files"]
    assert patch_file["fileName"] == "./0001-x.patch"
    assert {c["algorithm"] for c in patch_file["checksums"]} == {"SHA1", "SHA256"}
    k8s_id = _packages(spdx)["k8s.io/kubernetes"]["SPDXID"]
    assert {"spdxElementId": patch_file["SPDXID"], "relationshipType": "PATCH_APPLIED", "relatedSpdxElement": k8s_id} \
        in spdx["relationships"]
    assert "patched: 0001-x.patch" in _packages(spdx)["k8s.io/kubernetes"]["comment"]


def test_spdx_passes_spdx_tools_and_the_ntia_checker_and_each_catches_a_planted_fault(tmp_path):
    from ntia_conformance_checker import SbomChecker
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    spdx, _ = _docs()
    path = tmp_path / "good.spdx.json"
    path.write_bytes(sbom.dumps(spdx))
    assert [m.validation_message for m in validate_full_spdx_document(parse_file(str(path)))] == []
    assert SbomChecker(str(path)).compliant
    spdx["packages"][3].pop("supplier")  # the fault the issue found: a package without a supplier
    path.write_bytes(sbom.dumps(spdx))
    checker = SbomChecker(str(path))
    assert not checker.compliant and [n for n, _ in checker.components_without_suppliers] == [spdx["packages"][3]["name"]]


def test_cyclonedx_passes_its_strict_schema_and_catches_a_planted_fault():
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    _, cdx = _docs()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(cdx)) is None
    k8s = next(c for c in cdx["components"] if "pedigree" in c)
    k8s["pedigree"]["patches"][0]["type"] = "hotfix"  # not a CycloneDX patch type
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(cdx)) is not None


def test_spec_sbom_fields_are_validated():
    base = 'name: x\nversion: 0.1.0\nkubernetes: {version: "1.36"}\n'
    good = spec_mod.loads(base + "sbom:\n  supplier: {name: Acme Corp, url: https://acme.example.com}\n"
                                 "  author: {name: Acme, email: a@acme.example.com}\n", "x.yaml")
    assert good.sbom.supplier == Party("Acme Corp", "", "https://acme.example.com") and good.sbom.author.email
    assert spec_mod.loads(base, "x.yaml").sbom.supplier is None
    with pytest.raises(spec_mod.SpecError) as err:
        spec_mod.loads(base + "sbom:\n  supplier: {name: Acme (EU), url: ftp://x}\n  author: {name: Acme}\n  signer: x\n", "x.yaml")
    text = str(err.value)
    for words in ("sbom.supplier.name: must be a name", "sbom.supplier.url: must be an http(s) URL",
                  "sbom.author.email: is required", "sbom.signer: unknown field"):
        assert words in text, text


def test_provenance_names_local_sources_relative_to_the_spec(tmp_path):
    plugin = tmp_path / "checkout" / "examples" / "underlay" / "plugin"
    info = record(plugins=[build_info.PluginInfo("example.com/underlay", ["U"], "path", path=str(plugin), sha256="ee" * 32)],
                  patches=[build_info.PatchInfo("0001-x.patch", "ff" * 32)])
    deps = provenance.resolved_dependencies(info, plugin.parent, {"0001-x.patch": "../patches/0001-x.patch"})
    uris = {d["name"]: d.get("uri") for d in deps}
    assert uris["example.com/underlay"] == "file:plugin" and uris["0001-x.patch"] == "file:../patches/0001-x.patch"
    assert str(tmp_path) not in json.dumps(deps)
    # Moved checkout, same statement; without a spec no path at all, the digest still names the tree.
    moved = record(plugins=[build_info.PluginInfo("example.com/underlay", ["U"], "path", path="/elsewhere/underlay/plugin",
                                                  sha256="ee" * 32)], patches=info.patches)
    assert provenance.resolved_dependencies(moved, Path("/elsewhere/underlay"),
                                            {"0001-x.patch": "../patches/0001-x.patch"}) == deps
    bare = {d["name"]: d for d in provenance.resolved_dependencies(info, None)}
    assert "uri" not in bare["example.com/underlay"] and bare["example.com/underlay"]["digest"] == {"sha256": "ee" * 32}


def test_sbom_inputs_read_the_spec_patches_and_refuse_a_changed_one(tmp_path):
    patch = tmp_path / "patches" / "0001-x.patch"
    patch.parent.mkdir()
    patch.write_text(PATCH_TEXT)
    spec_dir = tmp_path / "spec"
    spec = spec_mod.Spec(path=spec_dir / "scheduler.yaml", name="x", version="0.1.0", kubernetes_version="1.36",
                         patches=(patch,))
    recorded = build_info.PatchInfo("0001-x.patch", build_info.sha256_file(patch), ["k8s.io/kubernetes/pkg/x.go"])
    inputs = image_request.sbom_inputs(spec, record(patches=[recorded]))
    assert inputs.patches == (gomodules.Patch("0001-x.patch", recorded.sha256, "../patches/0001-x.patch", PATCH_TEXT,
                                              ("k8s.io/kubernetes",)),)
    patch.write_text(PATCH_TEXT + "+c\n")
    with pytest.raises(image_request.UserError, match="changed since the build"):
        image_request.sbom_inputs(spec, record(patches=[recorded]))


def test_the_shipped_policy_names_the_recipe_and_builder_the_provenance_carries():
    """The Rego policy (judged by the real cosign in tests/integration/test_sign.py) states the same facts as provenance.py:
    renaming the build type or the builder without the policy would refuse every image."""
    from scheduler_build import resources

    text = resources.policy().decode()
    assert text.count("package signature") == 1 and "default allow = false" in text
    assert f'== "{provenance.BUILD_TYPE}"' in text and f'== "{provenance.PREDICATE_TYPE}"' in text
    assert f'"{provenance.BUILDER_ID.split("@")[0]}@"' in text and f'"{provenance.STATEMENT_TYPE}"' in text
