"""CycloneDX 1.6 JSON SBOM of the Go modules compiled into a binary, beside the SPDX one.

Same source as sbom.py (the binary's own `go version -m` build info), same
determinism: the timestamp is SOURCE_DATE_EPOCH and the serial number is a UUID
derived from the binary's SHA-256, so equal binaries give equal bytes.
"""

from __future__ import annotations

import json
import uuid

from scheduler_build import __version__
from scheduler_build import epoch as epoch_mod
from scheduler_build.image.sbom import GoBuildInfo, Module
from scheduler_build.image.sbom import _purl  # one purl spelling for both SBOM formats

MEDIA_TYPE = "application/vnd.cyclonedx+json"
SPEC_VERSION = "1.6"
_NAMESPACE = uuid.UUID("6f1bf0a4-3c0c-4a8e-9f39-0d7c1f5b2a11")  # this toolkit's CycloneDX serial numbers


def _component(module: Module, role: str = "") -> dict:
    purl = _purl(module.path, module.version)
    component = {"type": "library", "bom-ref": purl, "name": module.path, "version": module.version, "purl": purl}
    properties = []
    if module.sum:
        properties.append({"name": "go:sum", "value": module.sum})
    if module.replaced_by:
        properties.append({"name": "go:replacedBy", "value": module.replaced_by})
    if role:
        properties.append({"name": "go:role", "value": role})
    if properties:
        component["properties"] = properties
    return component


def document(binary_name: str, binary_sha256: str, version: str, platform: str, info: GoBuildInfo, epoch: int) -> dict:
    """The CycloneDX 1.6 BOM (a dict; serialise with `dumps`)."""
    arch = platform.split("/")[-1]
    root_ref = f"pkg:generic/{binary_name}@{version}?arch={arch}"
    root = {
        "type": "application", "bom-ref": root_ref, "name": binary_name, "version": version, "purl": root_ref,
        "hashes": [{"alg": "SHA-256", "content": binary_sha256}],
        "properties": [{"name": "platform", "value": platform}, {"name": "go:version", "value": info.go_version}]
        + [{"name": f"go:build:{k}", "value": v} for k, v in sorted(info.settings.items()) if k != "-ldflags"],
    }
    stdlib = _component(Module("stdlib", info.go_version))
    modules = ([(info.main_module, "main module")] if info.main_module else []) + [
        (m, "") for m in sorted(info.deps, key=lambda m: (m.path, m.version))]
    components, seen = [stdlib], {stdlib["bom-ref"]}
    for module, role in modules:
        component = _component(module, role)
        if component["bom-ref"] not in seen:  # bom-refs must be unique
            seen.add(component["bom-ref"])
            components.append(component)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{uuid.uuid5(_NAMESPACE, binary_sha256)}",
        "version": 1,
        "metadata": {
            "timestamp": epoch_mod.utc_stamp(epoch),
            "tools": {"components": [{"type": "application", "name": "scheduler-build", "version": __version__}]},
            "component": root,
        },
        "components": components,
        "dependencies": [{"ref": root_ref, "dependsOn": [c["bom-ref"] for c in components]}]
        + [{"ref": c["bom-ref"], "dependsOn": []} for c in components],
    }


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
