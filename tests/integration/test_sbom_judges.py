"""Independent judges on a real build's SBOMs and provenance: what others' tools accept.

The outputs are the example's (examples/underlay/scheduler.yaml: a local plugin, a patched
Kubernetes, replaced staging modules), packaged by the image stage from the suite's one
shared example build. The judges are not ours: cyclonedx-gomod (the CycloneDX Go
generator, built from the Go module proxy, cached) run on the same binary, SPDX's
spdx-tools, the NTIA conformance checker, cyclonedx-python-lib's strict schema validator,
and the in-toto attestation framework's own Go validators (testkit/judges/intoto, built once
per source hash). Each has a negative control: a planted fault it catches. The shipped
cosign policy is judged by the real cosign in tests/integration/test_sign.py.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from invoke import Config, Context

from scheduler_build import platforms, settings
from scheduler_build.inputs import image as image_inputs
from scheduler_build.image import assemble, oci
from scheduler_build.image import info as image_info
from scheduler_build.image import request as image_request

from testkit import judges


REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "examples/underlay/scheduler.yaml"
PATCH = REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"


@pytest.fixture(scope="module")
def outputs(built_example_scheduler, tmp_path_factory) -> dict:
    """The example build packaged with its spec (a copy of its dist/, no engine needed): SBOMs and provenance."""
    work = tmp_path_factory.mktemp("sbom-judges")
    platform_dir = built_example_scheduler.binary.parent
    dist = work / "dist"
    shutil.copytree(platform_dir, dist / platform_dir.relative_to(platform_dir.parents[2]))
    host = platforms.host_arch()
    context = Context(config=Config(defaults=settings.DEFAULTS))
    opts = image_inputs.image_inputs(context, spec=str(SPEC), platforms=f"linux/{host}", dist=dist,
                              repository="scheduler-build-test/sbom-judges")
    result = assemble.build(image_request.prepare(image_request.plan(opts, host)), host)
    info = json.loads((result.layout / image_info.FILE_NAME).read_text())["platforms"][0]
    statement = work / "provenance.json"
    statement.write_bytes(oci.Layout(result.layout).blob(info["provenance_digest"]))
    return {"work": work, "binary": Path(info["sbom"]).parent / "kube-scheduler", "spdx": Path(info["sbom"]),
            "cyclonedx": Path(info["cyclonedx"]), "provenance": statement}


def _write(outputs: dict, name: str, doc: dict) -> Path:
    path = outputs["work"] / name
    path.write_text(json.dumps(doc))
    return path


# --- cyclonedx-gomod: the cross-check of every purl ----------------------------------------------


def _bare(purl: str) -> str:
    return purl.split("?", 1)[0]


def purl_disagreements(ours: dict, theirs: dict) -> list[str]:
    """Every module purl (name@version) one SBOM lists and the other does not. Two known spellings differ:
    cyclonedx-gomod names the standard library `std` (ours: `stdlib`, as OSV and govulncheck do), and a
    module replaced by a directory (a local plugin's snapshot, the patched Kubernetes) by that directory,
    where ours keeps the module's path and version: those are compared by count. Its main module is
    its metadata.component, ours a component."""
    mine = {c["purl"] for c in ours["components"]}
    local = {c["purl"] for c in ours["components"] if c["name"] in _directory_replaced(ours)}
    listed = [*theirs["components"], theirs["metadata"]["component"]]
    other = {_bare(c["purl"]).replace("pkg:golang/std@", "pkg:golang/stdlib@", 1)
             for c in listed if c.get("purl", "").startswith("pkg:golang/")}
    directories = {p for p in other if p.startswith(("pkg:golang/.", "pkg:golang//"))}
    problems = [f"only ours: {p}" for p in sorted(mine - local - other)]
    problems += [f"only cyclonedx-gomod's: {p}" for p in sorted(other - directories - mine)]
    if len(local) != len(directories):
        problems.append(f"{len(local)} directory-replaced modules in ours, {len(directories)} in cyclonedx-gomod's")
    return problems


def _directory_replaced(bom: dict) -> set[str]:
    return {c["name"] for c in bom["components"] if {"name": "go:localReplace", "value": "true"} in c.get("properties", [])}


@pytest.fixture(scope="module")
def gomod_bom(outputs) -> dict:
    out = outputs["work"] / "cyclonedx-gomod.json"
    proc = subprocess.run([str(judges.cyclonedx_gomod()), "bin", "-json", "-std", "-output", str(out), str(outputs["binary"])],
                          capture_output=True, text=True, timeout=600, env=judges.go_environment())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_cyclonedx_gomod_lists_every_module_at_the_version_we_list(outputs, gomod_bom):
    ours = json.loads(outputs["cyclonedx"].read_text())
    assert purl_disagreements(ours, gomod_bom) == []
    spdx = json.loads(outputs["spdx"].read_text())
    spdx_purls = {r["referenceLocator"] for p in spdx["packages"][1:] for r in p["externalRefs"]}
    assert spdx_purls == {c["purl"] for c in ours["components"]}  # the SPDX document lists the same modules
    # The versions the issue found wrong, as compiled (`=> ... v0.36.3`).
    names = {c["name"]: c for c in ours["components"]}
    for staging in ("k8s.io/cloud-provider", "k8s.io/csi-translation-lib", "k8s.io/apiextensions-apiserver"):
        assert names[staging]["version"].startswith("v0.36."), names[staging]
        assert {"name": "go:originalVersion", "value": "v0.0.0"} in names[staging]["properties"]
    # Negative control: the pre-`replace` version, as the SBOMs once said, is caught.
    planted = copy.deepcopy(ours)
    for component in planted["components"]:
        if component["name"] == "k8s.io/cloud-provider":
            component["purl"] = component["bom-ref"] = "pkg:golang/k8s.io/cloud-provider@v0.0.0"
    assert purl_disagreements(planted, gomod_bom) == ["only ours: pkg:golang/k8s.io/cloud-provider@v0.0.0",
                                                     f"only cyclonedx-gomod's: {names['k8s.io/cloud-provider']['purl']}"]


# --- SPDX: spdx-tools and the NTIA minimum elements ------------------------------------------------


def test_ntia_conformance_checker_passes_and_catches_a_missing_supplier(outputs):
    from ntia_conformance_checker import SbomChecker

    checker = SbomChecker(str(outputs["spdx"]))
    assert checker.compliant, checker.output_json()
    assert checker.get_total_number_components() > 100
    doc = json.loads(outputs["spdx"].read_text())
    planted = next(p for p in doc["packages"] if p["name"] == "k8s.io/cloud-provider")
    del planted["supplier"]
    checker = SbomChecker(str(_write(outputs, "no-supplier.spdx.json", doc)))
    assert not checker.compliant and [name for name, _ in checker.components_without_suppliers] == ["k8s.io/cloud-provider"]


def test_spdx_tools_validate_the_document_and_catch_a_dangling_patch(outputs):
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    messages = validate_full_spdx_document(parse_file(str(outputs["spdx"])))
    assert [m.validation_message for m in messages] == []
    doc = json.loads(outputs["spdx"].read_text())
    applied = [r for r in doc["relationships"] if r["relationshipType"] == "PATCH_APPLIED"]
    k8s = next(p for p in doc["packages"] if p["name"] == "k8s.io/kubernetes")
    assert [(r["spdxElementId"], r["relatedSpdxElement"]) for r in applied] == [(doc["files"][0]["SPDXID"], k8s["SPDXID"])]
    assert doc["files"][0]["fileName"] == f"./{PATCH.name}"
    doc["files"] = []  # the patch file the relationship names is gone
    messages = validate_full_spdx_document(parse_file(str(_write(outputs, "dangling.spdx.json", doc))))
    assert any(applied[0]["spdxElementId"] in m.validation_message for m in messages), [m.validation_message for m in messages]


# --- CycloneDX: cyclonedx-python-lib's strict validator ----------------------------------------------


def test_cyclonedx_validates_strictly_with_the_patch_as_pedigree_and_catches_a_fault(outputs):
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    validator = JsonStrictValidator(SchemaVersion.V1_6)
    text = outputs["cyclonedx"].read_text()
    assert validator.validate_str(text) is None
    doc = json.loads(text)
    k8s = next(c for c in doc["components"] if c["name"] == "k8s.io/kubernetes")
    [patch] = k8s["pedigree"]["patches"]
    assert patch["diff"]["text"]["content"] == PATCH.read_text() and patch["diff"]["url"] == "../patches/" + PATCH.name
    assert doc["metadata"]["authors"][0]["email"] and doc["metadata"]["supplier"]["name"] == "Acme Corp"
    del doc["metadata"]["component"]["name"]  # a component without its required name
    assert validator.validate_str(json.dumps(doc)) is not None


# --- in-toto: the attestation framework's own validators ---------------------------------------------


def test_provenance_passes_the_in_toto_validators_and_names_no_build_machine_path(outputs):
    validate = judges.intoto_validate()
    proc = subprocess.run([str(validate), str(outputs["provenance"])], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("ok "), proc.stdout + proc.stderr
    statement = json.loads(outputs["provenance"].read_text())
    uris = {d["name"]: d.get("uri", "") for d in statement["predicate"]["buildDefinition"]["resolvedDependencies"]}
    assert uris["example.com/acme/underlay/pkg/underlayiplimit"] == "file:plugin"
    assert uris[PATCH.name] == f"file:../patches/{PATCH.name}"
    assert str(REPO) not in outputs["provenance"].read_text()
    # Negative controls: each validator catches its own planted fault.
    no_type = copy.deepcopy(statement)
    del no_type["predicate"]["buildDefinition"]["buildType"]
    bad_digest = copy.deepcopy(statement)
    bad_digest["subject"][0]["digest"]["sha256"] = "not-hex"
    faults = [_write(outputs, "no-build-type.json", no_type), _write(outputs, "bad-digest.json", bad_digest)]
    proc = subprocess.run([str(validate), *map(str, faults)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert "Provenance.Validate" in lines[0] and "buildType" in lines[0], lines
    assert "Statement.Validate" in lines[1] and "hex" in lines[1], lines
