"""SPDX 2.3 JSON SBOM of the Go modules compiled into a binary (components: gomodules.py).

The document is deterministic: its timestamp is SOURCE_DATE_EPOCH and its namespace
is derived from the binary's SHA-256. NTIA minimum elements: every package names a
supplier (the spec's `sbom.supplier` for our own modules, else the module path's
host), a version and a purl; the creators are the tool and the spec's `sbom.author`
with its contact; relationships: the document DESCRIBES the binary, which CONTAINS
every module, and the main module DEPENDS_ON each dependency.

A module built from a `replace`d version is listed as compiled, with an annotation
`go:originalVersion=<the required version>`. The patched Kubernetes: each patch whose
diff was at hand is a File (SHA-1 and SHA-256) with SPDX 2.3's own relationship for it,
`<patch> PATCH_APPLIED <module>` ("a patch file that has been applied to"); the module's
comment and an annotation name the series, so a reader without the files still sees it.
"""

from __future__ import annotations

import hashlib
import json
import re

from scheduler_build import __version__
from scheduler_build import epoch as epoch_mod
from scheduler_build.image.gomodules import (  # noqa: F401 (read_build_info, parse_version_m: the stage's entry points)
    Component, GoBuildInfo, Module, Patch, SbomInputs, binary_supplier, components, parse_version_m, purl, read_build_info)
from scheduler_build.spec.model import Party

MEDIA_TYPE = "application/spdx+json"
TOOL = f"Tool: scheduler-build-{__version__}"


def _spdx_id(prefix: str, text: str) -> str:
    # SPDX IDs allow [A-Za-z0-9.-]; a short hash keeps sanitised paths unique.
    clean = re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")
    return f"SPDXRef-{prefix}-{clean}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def party(who: Party) -> str:
    """SPDX's `Organization: name (email)` (the email is the contact; left out when unknown)."""
    return f"Organization: {who.name}" + (f" ({who.email})" if who.email else "")


def _package(spdx_id: str, name: str, version: str, package_url: str, supplier: Party, comment: str = "") -> dict:
    pkg = {
        "SPDXID": spdx_id,
        "name": name,
        "versionInfo": version,
        "supplier": party(supplier),
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": package_url}],
        "primaryPackagePurpose": "LIBRARY",
    }
    if comment:
        pkg["comment"] = comment
    return pkg


def _annotation(created: str, text: str) -> dict:
    return {"annotationDate": created, "annotationType": "OTHER", "annotator": TOOL, "comment": text}


def _patch_file(patch: Patch) -> dict:
    data = patch.text.encode()
    return {
        "SPDXID": _spdx_id("File-patch", patch.file),
        "fileName": f"./{patch.file}",
        "fileTypes": ["SOURCE"],
        "checksums": [{"algorithm": "SHA1", "checksumValue": hashlib.sha1(data).hexdigest()},
                      {"algorithm": "SHA256", "checksumValue": patch.sha256}],
        "licenseConcluded": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "comment": f"patch {patch.uri or patch.file} (relative to the build spec), applied to " + ", ".join(patch.modules),
    }


def _module_package(component: Component, inputs: SbomInputs, created: str) -> tuple[dict, list[dict], list[dict]]:
    """(package, patch files, their PATCH_APPLIED relationships) of one module."""
    module = component.module
    notes = [f"go.sum {module.sum}"] if module.sum else []
    notes += [component.role] if component.role and component.role != "stdlib" else []
    pkg_id = _spdx_id("Package-go" if component.role == "stdlib" else "Package-go-module", f"{module.path}@{module.version}")
    annotations = [_annotation(created, " ".join(f"{k}={v}" for k, v in component.original_properties()))] \
        if component.original_properties() else []
    if module.original:
        notes.append(f"replace {module.original} => {component.name} {component.version}")
    if module.local:
        notes.append("built from a local directory (replace), not from the module proxy")
    patches = inputs.patches_of(module.path)
    files = [_patch_file(p) for p in patches if p.text]
    if patches:
        notes.append("patched: " + ", ".join(f"{p.file} (sha256 {p.sha256})" for p in patches))
        annotations.append(_annotation(created, "scheduler-build:patched=" + ",".join(p.file for p in patches)))
    pkg = _package(pkg_id, component.name, component.version, component.purl, component.supplier(inputs), "; ".join(notes))
    if annotations:
        pkg["annotations"] = annotations
    applied = [{"spdxElementId": f["SPDXID"], "relationshipType": "PATCH_APPLIED", "relatedSpdxElement": pkg_id} for f in files]
    return pkg, files, applied


def document(binary_name: str, binary_sha256: str, version: str, platform: str, info: GoBuildInfo, epoch: int,
             inputs: SbomInputs | None = None) -> dict:
    """The SPDX 2.3 document (a dict; serialise with `dumps`)."""
    inputs = inputs or SbomInputs()
    created = epoch_mod.utc_stamp(epoch)
    root_id = "SPDXRef-Package-" + re.sub(r"[^A-Za-z0-9.-]+", "-", binary_name)
    listed = components(info)
    root = _package(root_id, binary_name, version, f"pkg:generic/{binary_name}@{version}?arch={platform.split('/')[-1]}",
                    binary_supplier(listed, inputs))
    root["primaryPackagePurpose"] = "APPLICATION"
    root["checksums"] = [{"algorithm": "SHA256", "checksumValue": binary_sha256}]
    root["comment"] = f"{platform} binary; Go {info.go_version}; build settings: " + " ".join(f"{k}={v}" for k, v in sorted(info.settings.items()) if k != "-ldflags")
    packages, files = [root], []
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": root_id}]
    main_id = ""
    for component in listed:
        pkg, patch_files, applied = _module_package(component, inputs, created)
        packages.append(pkg)
        files += patch_files
        relationships.append({"spdxElementId": root_id, "relationshipType": "CONTAINS", "relatedSpdxElement": pkg["SPDXID"]})
        relationships += applied
        if component.role == "main module":
            main_id = pkg["SPDXID"]
    if main_id:  # Go's build info is flat: every module is the main module's dependency
        relationships += [{"spdxElementId": main_id, "relationshipType": "DEPENDS_ON", "relatedSpdxElement": p["SPDXID"]}
                          for p in packages[1:] if p["SPDXID"] != main_id]
    creators = [TOOL] + ([party(inputs.author)] if inputs.author else [])
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{binary_name}-{version}-{platform.replace('/', '-')}",
        "documentNamespace": f"https://scheduler-build.invalid/spdx/{binary_name}/{version}/{binary_sha256}",
        "creationInfo": {"created": created, "creators": creators},
        "documentDescribes": [root_id],
        "packages": packages,
        "relationships": relationships,
    }
    if files:
        doc["files"] = files
    return doc


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
