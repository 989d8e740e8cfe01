"""SLSA v1.0 provenance (an in-toto v1 Statement) for each platform image, pure.

Everything comes from the typed build record (build/info.py) and the image
request: no clock, no host names, so the same inputs give the same bytes. The
statement's subject is the platform's image manifest; `inv image.push --sign`
attests its predicate with cosign (cosign wraps it in its own statement naming
the pushed digest), and `inv image.verify` compares the two.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
from typing import Any

from scheduler_build import __version__
from scheduler_build import epoch as epoch_mod
from scheduler_build.build.info import BuildInfo
from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.resolve.versions import KUBERNETES_MODULE

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
COSIGN_TYPE = "slsaprovenance1"  # cosign attest --type for PREDICATE_TYPE
# A URI naming this build's recipe (SLSA: buildType); bumped when its parameters change meaning.
BUILD_TYPE = "urn:scheduler-build:build-type:image:v1"
BUILDER_ID = f"pkg:pypi/scheduler-build@{__version__}"


def version_suffix(info: BuildInfo) -> str:
    """What the build appended to the Kubernetes version (`v1.36.3-acme.1` -> `-acme.1`)."""
    stamped, version = info.kubernetes.stamped_version, info.kubernetes.version
    return stamped[len(version):] if stamped.startswith(version) else stamped


def relative_uri(path: str | Path, spec_dir: Path | None) -> str:
    """`file:` and the path relative to the spec's directory (POSIX separators): the same on every checkout.
    "" without a spec: an absolute path would publish the builder's layout and change when the checkout moves."""
    if spec_dir is None:
        return ""
    return "file:" + os.path.relpath(Path(path), spec_dir).replace(os.sep, "/")


def _plugin(plugin: Any, spec_dir: Path | None) -> dict[str, Any]:
    if plugin.source == "module":
        return {"uri": f"pkg:golang/{plugin.module}@{plugin.version}", "name": plugin.package,
                "annotations": {"plugins": list(plugin.names)}}
    uri = relative_uri(plugin.path, spec_dir)
    return {**({"uri": uri} if uri else {}), "name": plugin.package, "digest": {"sha256": plugin.sha256},
            "annotations": {"plugins": list(plugin.names), "digest": "sha256 of the plugin's source tree"}}


def resolved_dependencies(info: BuildInfo, spec_dir: Path | None = None,
                          patch_uris: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Kubernetes (version and go.sum hash, as the build recorded it), each plugin, each patch, the PGO profile,
    the builder image and its Go.

    Local sources are named relative to the spec (`patch_uris`: patch file -> path relative to it);
    a patch without one is named `file:patches/<file>`."""
    k8s: dict[str, Any] = {"uri": f"pkg:golang/{KUBERNETES_MODULE}@{info.kubernetes.version}", "name": KUBERNETES_MODULE}
    if info.kubernetes.module_sum:
        k8s["annotations"] = {"go.sum": info.kubernetes.module_sum}
    out = [k8s]
    out += [_plugin(p, spec_dir) for p in info.plugins]
    uris = patch_uris or {}
    out += [{"uri": "file:" + uris.get(p.file, f"patches/{p.file}"), "name": p.file, "digest": {"sha256": p.sha256}}
            for p in info.patches]
    if info.pgo is not None:  # named like a patch: by its file, relative to the spec when there is one
        uri = relative_uri(info.pgo.path, spec_dir) or f"file:{Path(info.pgo.path).name}"
        out.append({"uri": uri, "name": "pgo-profile", "digest": {"sha256": info.pgo.sha256},
                    "annotations": {"flag": info.pgo.flag}})
    image_id = info.builder.image_id.partition(":")
    out.append({"uri": f"docker:{info.builder.image}", "name": "builder-image", "digest": {image_id[0]: image_id[2]},
                "annotations": {"go": info.builder.go_version, "source": info.builder.source}})
    return out


def predicate(info: BuildInfo, *, platforms: list[str], spec_sha256: str, source: str, revision: str,
              epoch: int, spec_dir: Path | None = None, patch_uris: dict[str, str] | None = None) -> dict[str, Any]:
    """The SLSA v1.0 provenance predicate of one platform's image."""
    external: dict[str, Any] = {
        "kubernetesVersion": info.kubernetes.version,
        "platforms": sorted(platforms),
        "versionSuffix": version_suffix(info),
        "name": info.name,
    }
    if spec_sha256:
        external["spec"] = {"digest": {"sha256": spec_sha256}}
    if source or revision:
        external["source"] = {"uri": source, "revision": revision}
    stamp = epoch_mod.utc_stamp(epoch)
    return {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": external,
            "internalParameters": {
                "platform": info.platform,
                "sourceDateEpoch": epoch,
                "binarySourceDateEpoch": info.source_date_epoch,
                "patchSeriesDigest": info.patch_series_digest,
                "binarySha256": info.binary.sha256,
            },
            "resolvedDependencies": resolved_dependencies(info, spec_dir, patch_uris),
        },
        "runDetails": {
            "builder": {"id": BUILDER_ID, "version": {"scheduler-build": __version__, "go": info.builder.go_version}},
            "metadata": {"invocationId": f"{info.name}/{info.kubernetes.stamped_version}/{info.platform}",
                         "startedOn": stamp, "finishedOn": stamp},
        },
    }


def statement(subject_name: str, manifest_digest: str, pred: dict[str, Any]) -> dict[str, Any]:
    algorithm, _, value = manifest_digest.partition(":")
    return {"_type": STATEMENT_TYPE, "subject": [{"name": subject_name, "digest": {algorithm: value}}],
            "predicateType": PREDICATE_TYPE, "predicate": pred}


def dumps(doc: dict[str, Any]) -> bytes:
    """The one encoding (canonical JSON): equal inputs, equal bytes."""
    return oci.canonical(doc)


@dataclass(frozen=True)
class Recorded:
    """The parameters a provenance statement recorded, read back typed (`image.verify --rebuild`)."""

    name: str
    kubernetes_version: str
    platforms: list[str]
    spec_sha256: str  # "" for a build without a spec
    source_date_epoch: int
    binary_source_date_epoch: int

    @classmethod
    def from_statement(cls, statement: dict[str, Any]) -> Recorded:
        """A statement `predicate()` wrote; anything else is one UserError naming the field."""
        try:
            definition = statement["predicate"]["buildDefinition"]
            external, internal = definition["externalParameters"], definition["internalParameters"]
            spec = external.get("spec") or {}
            recorded = cls(
                name=str(external["name"]), kubernetes_version=str(external["kubernetesVersion"]),
                platforms=[str(p) for p in external["platforms"]], spec_sha256=str(spec.get("digest", {}).get("sha256", "")),
                source_date_epoch=int(internal["sourceDateEpoch"]), binary_source_date_epoch=int(internal["binarySourceDateEpoch"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserError(f"the provenance statement is not one scheduler-build wrote (missing or bad {exc})",
                            f"only images built by `inv image.build` (buildType {BUILD_TYPE}) can be rebuilt") from None
        if definition.get("buildType") != BUILD_TYPE:
            raise UserError(f"the provenance's buildType is {definition.get('buildType')!r}, not {BUILD_TYPE}",
                            "rebuild it with the scheduler-build version that built it")
        return recorded
