"""SPDX 2.3 JSON SBOM of the Go modules compiled into a binary.

The module list comes from the binary itself (`go version -m`, which reads the
build info the Go linker embeds, also in stripped and cross-compiled binaries),
so the SBOM describes what was linked, not what a go.mod merely mentions. The
document is deterministic: its timestamp is SOURCE_DATE_EPOCH and its namespace
is derived from the binary's SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build import __version__
from scheduler_build import epoch as epoch_mod
from scheduler_build import gotool
from scheduler_build.errors import UserError

MEDIA_TYPE = "application/spdx+json"


@dataclass(frozen=True)
class Module:
    path: str
    version: str
    sum: str = ""  # go.sum "h1:" hash when the binary records one (not in vendor builds)
    replaced_by: str = ""  # "path version" of a replace directive


@dataclass
class GoBuildInfo:
    go_version: str  # e.g. go1.26.8
    main_path: str = ""
    main_module: Module | None = None
    deps: list[Module] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)


def parse_version_m(text: str) -> GoBuildInfo:
    """Parse `go version -m` output (tab-separated lines after a `<file>: goX.Y.Z` header)."""
    lines = text.splitlines()
    if not lines or ":" not in lines[0]:
        raise ValueError("not `go version -m` output")
    go_version = lines[0].rsplit(":", 1)[1].strip()
    info = GoBuildInfo(go_version=go_version)
    last: Module | None = None
    for raw in lines[1:]:
        parts = raw.strip().split("\t")
        kind, rest = parts[0], parts[1:]
        if kind == "path" and rest:
            info.main_path = rest[0]
        elif kind == "mod" and rest:
            info.main_module = Module(rest[0], rest[1] if len(rest) > 1 else "(devel)", rest[2] if len(rest) > 2 else "")
        elif kind == "dep" and rest:
            last = Module(rest[0], rest[1] if len(rest) > 1 else "", rest[2] if len(rest) > 2 else "")
            info.deps.append(last)
        elif kind == "=>" and rest and info.deps:
            # A replace directive applies to the dep line just above it.
            replacement = " ".join(rest[:2]).strip()
            info.deps[-1] = Module(info.deps[-1].path, info.deps[-1].version, rest[2] if len(rest) > 2 else info.deps[-1].sum, replacement)
        elif kind == "build" and rest:
            key, _, value = rest[0].partition("=")
            info.settings[key] = value
    return info


def read_build_info(binary: Path) -> GoBuildInfo:
    proc = subprocess.run([gotool.binary(), "version", "-m", str(binary)], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise UserError(f"`go version -m {binary}` failed: {(proc.stderr or proc.stdout).strip()[:200]}", "is it a Go binary built with module support?")
    return parse_version_m(proc.stdout)


def _spdx_id(prefix: str, text: str) -> str:
    # SPDX IDs allow [A-Za-z0-9.-]; a short hash keeps sanitised paths unique.
    clean = re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")
    return f"SPDXRef-{prefix}-{clean}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _purl(path: str, version: str) -> str:
    return f"pkg:golang/{path}@{version}" if version and version != "(devel)" else f"pkg:golang/{path}"


def _package(spdx_id: str, name: str, version: str, purl: str, comment: str = "") -> dict:
    pkg = {
        "SPDXID": spdx_id,
        "name": name,
        "versionInfo": version,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": purl}],
        "primaryPackagePurpose": "LIBRARY",
    }
    if comment:
        pkg["comment"] = comment
    return pkg


def document(binary_name: str, binary_sha256: str, version: str, platform: str, info: GoBuildInfo, epoch: int) -> dict:
    """The SPDX 2.3 document (a dict; serialise with `dumps`)."""
    created = epoch_mod.utc_stamp(epoch)
    root_id = "SPDXRef-Package-" + re.sub(r"[^A-Za-z0-9.-]+", "-", binary_name)
    root = _package(root_id, binary_name, version, f"pkg:generic/{binary_name}@{version}?arch={platform.split('/')[-1]}")
    root["primaryPackagePurpose"] = "APPLICATION"
    root["checksums"] = [{"algorithm": "SHA256", "checksumValue": binary_sha256}]
    root["comment"] = f"{platform} binary; Go {info.go_version}; build settings: " + " ".join(f"{k}={v}" for k, v in sorted(info.settings.items()) if k != "-ldflags")
    packages = [root]
    relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": root_id}]

    stdlib_id = _spdx_id("Package-go", "stdlib")
    packages.append(_package(stdlib_id, "stdlib", info.go_version, _purl("stdlib", info.go_version)))
    relationships.append({"spdxElementId": root_id, "relationshipType": "CONTAINS", "relatedSpdxElement": stdlib_id})
    modules = ([info.main_module] if info.main_module else []) + sorted(info.deps, key=lambda m: (m.path, m.version))
    for index, module in enumerate(modules):
        comment_parts = []
        if module.sum:
            comment_parts.append(f"go.sum {module.sum}")
        if module.replaced_by:
            comment_parts.append(f"replaced by {module.replaced_by}")
        if index == 0 and info.main_module is module:
            comment_parts.append("main module")
        mod_id = _spdx_id("Package-go-module", f"{module.path}@{module.version}")
        packages.append(_package(mod_id, module.path, module.version, _purl(module.path, module.version), "; ".join(comment_parts)))
        relationships.append({"spdxElementId": root_id, "relationshipType": "CONTAINS", "relatedSpdxElement": mod_id})
    return {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{binary_name}-{version}-{platform.replace('/', '-')}",
        "documentNamespace": f"https://scheduler-build.invalid/spdx/{binary_name}/{version}/{binary_sha256}",
        "creationInfo": {"created": created, "creators": [f"Tool: scheduler-build-{__version__}"]},
        "documentDescribes": [root_id],
        "packages": packages,
        "relationships": relationships,
    }


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
