"""CycloneDX 1.6 JSON SBOM of the Go modules compiled into a binary, beside the SPDX one.

Same components as sbom.py (gomodules.py, from the binary's own `go version -m`),
same determinism: the timestamp is SOURCE_DATE_EPOCH and the serial number is a UUID
derived from the binary's SHA-256, so equal binaries give equal bytes. A replaced
module is listed as compiled, with properties `go:originalVersion` (and
`go:originalPath` when the path changed). A patched module carries a `pedigree`: its
upstream release as the ancestor and each patch of the series (type `unofficial`,
the diff's text and its path relative to the spec).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from scheduler_build import __version__
from scheduler_build import epoch as epoch_mod
from scheduler_build.image.gomodules import Component, GoBuildInfo, Patch, SbomInputs, binary_supplier, components
from scheduler_build.spec.model import Party

MEDIA_TYPE = "application/vnd.cyclonedx+json"
SPEC_VERSION = "1.6"
_NAMESPACE = uuid.UUID("6f1bf0a4-3c0c-4a8e-9f39-0d7c1f5b2a11")  # this toolkit's CycloneDX serial numbers


def entity(who: Party) -> dict[str, Any]:
    """An organizationalEntity: name, URL, and the email as its contact."""
    out: dict[str, Any] = {"name": who.name}
    if who.url:
        out["url"] = [who.url]
    if who.email:
        out["contact"] = [{"email": who.email}]
    return out


def _patch(patch: Patch) -> dict[str, Any]:
    diff: dict[str, Any] = {}
    if patch.text:
        diff["text"] = {"contentType": "text/x-diff", "content": patch.text}
    if patch.uri:
        diff["url"] = patch.uri
    return {"type": "unofficial", **({"diff": diff} if diff else {})}


def _component(component: Component, inputs: SbomInputs) -> dict[str, Any]:
    module = component.module
    out: dict[str, Any] = {"type": "library", "bom-ref": component.purl, "supplier": entity(component.supplier(inputs)),
                           "name": component.name, "version": component.version, "purl": component.purl}
    properties = [{"name": "go:sum", "value": module.sum}] if module.sum else []
    properties += [{"name": k, "value": v} for k, v in component.original_properties()]
    if module.local:
        properties.append({"name": "go:localReplace", "value": "true"})  # built from a directory, not the proxy
    if component.role and component.role != "stdlib":
        properties.append({"name": "go:role", "value": component.role})
    patches = inputs.patches_of(module.path)
    if patches:
        out["pedigree"] = {
            "ancestors": [{"type": "library", "name": component.name, "version": component.version, "purl": component.purl}],
            "patches": [_patch(p) for p in patches],
            "notes": f"{component.name} {component.version} with {len(patches)} patch(es) applied by scheduler-build",
        }
        properties.append({"name": "scheduler-build:patched", "value": ",".join(p.file for p in patches)})
    if properties:
        out["properties"] = properties
    return out


def document(binary_name: str, binary_sha256: str, version: str, platform: str, info: GoBuildInfo, epoch: int,
             inputs: SbomInputs | None = None) -> dict:
    """The CycloneDX 1.6 BOM (a dict; serialise with `dumps`)."""
    inputs = inputs or SbomInputs()
    listed = components(info)
    arch = platform.split("/")[-1]
    root_ref = f"pkg:generic/{binary_name}@{version}?arch={arch}"
    main = next((c for c in listed if c.role == "main module"), None)
    supplier = binary_supplier(listed, inputs)
    root = {
        "type": "application", "bom-ref": root_ref, "supplier": entity(supplier), "name": binary_name, "version": version,
        "purl": root_ref, "hashes": [{"alg": "SHA-256", "content": binary_sha256}],
        "properties": [{"name": "platform", "value": platform}, {"name": "go:version", "value": info.go_version}]
        + [{"name": f"go:build:{k}", "value": v} for k, v in sorted(info.settings.items()) if k != "-ldflags"],
    }
    items = [_component(c, inputs) for c in listed]
    metadata: dict[str, Any] = {
        "timestamp": epoch_mod.utc_stamp(epoch),
        "tools": {"components": [{"type": "application", "name": "scheduler-build", "version": __version__}]},
        "component": root,
        "supplier": entity(supplier),
    }
    if inputs.author:
        metadata["authors"] = [{"name": inputs.author.name, "email": inputs.author.email}]
    dependencies = [{"ref": root_ref, "dependsOn": [c["bom-ref"] for c in items]}]
    if main is not None:  # Go's build info is flat: every module is the main module's dependency
        dependencies.append({"ref": main.purl, "dependsOn": [c["bom-ref"] for c in items if c["bom-ref"] != main.purl]})
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{uuid.uuid5(_NAMESPACE, binary_sha256)}",
        "version": 1,
        "metadata": metadata,
        "components": items,
        "dependencies": dependencies,
    }


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
