"""Offline schema checks of rendered objects: the target release's own OpenAPI, judged by kubeconform.

`convert` (pure) turns the Swagger 2.0 document a Kubernetes release ships
(`api/openapi-spec/swagger.json` in the k8s.io/kubernetes module, the OpenAPI its
API server serves) into one standalone, strict JSON schema per kind, named the
way kubeconform looks them up (`deployment-apps-v1.json`): every `$ref` it needs
travels in its own `definitions`, objects with declared properties admit no
others, and int-or-string and quantity fields take both forms. `schema_dir`
caches the schemas per release under <cache>/k8s-schemas/; `check` runs the
pinned kubeconform (built once from the Go module proxy) with `-strict` over a
list of objects and returns one line per refusal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable

import yaml

from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.errors import UserError
from scheduler_build.progress import log

KUBECONFORM = "github.com/yannh/kubeconform/cmd/kubeconform"
KUBECONFORM_VERSION = "v0.8.0"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_REF = "#/definitions/"
_SCHEMA_FORMAT = 1  # bump when convert() changes: the cache key


def file_name(api_version: str, kind: str) -> str:
    """kubeconform's name for a kind's schema: <kind>[-<group's first label>]-<version>.json."""
    group, _, version = api_version.rpartition("/")
    suffix = f"-{group.split('.')[0].lower()}-{version.lower()}" if group else f"-{version.lower()}"
    return f"{kind.lower()}{suffix}.json"


def _strict(node: Any) -> Any:
    """A copy of a Swagger schema node as a strict JSON schema (draft 4): no descriptions."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("format") == "int-or-string":
        return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    out = {key: _strict(value) for key, value in node.items()
           if key != "description" and not (key == "properties" and not isinstance(value, dict))}
    if "properties" in node:
        out["properties"] = {name: _strict(value) for name, value in node["properties"].items()}
        if "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            yield ref[len(_REF):]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def convert(swagger: dict) -> dict[str, dict]:
    """File name -> standalone strict schema, one for every kind the document declares."""
    defs = {name: _strict(schema) for name, schema in (swagger.get("definitions") or {}).items()}
    if _QUANTITY in defs:
        defs[_QUANTITY] = {"oneOf": [{"type": "string"}, {"type": "number"}]}
    out: dict[str, dict] = {}
    for name, raw in (swagger.get("definitions") or {}).items():
        for gvk in raw.get("x-kubernetes-group-version-kind") or []:
            group, version, kind = gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")
            api_version = f"{group}/{version}" if group else version
            needed, todo = set(), [name]
            while todo:
                current = todo.pop()
                for ref in _refs(defs.get(current, {})):
                    if ref not in needed and ref in defs:
                        needed.add(ref)
                        todo.append(ref)
            schema = {"$schema": "http://json-schema.org/draft-04/schema#", **defs[name]}
            schema["definitions"] = {ref: defs[ref] for ref in sorted(needed)}
            out.setdefault(file_name(api_version, kind), schema)
    return out


def swagger_file(k8s_version: str) -> Path:
    """The release's swagger.json in the Go module cache (downloaded through the proxy when missing)."""
    path = toolchain.module_dir("k8s.io/kubernetes", k8s_version) / "api" / "openapi-spec" / "swagger.json"
    if not path.is_file():
        raise UserError(f"k8s.io/kubernetes@{k8s_version} has no api/openapi-spec/swagger.json",
                        "target a Kubernetes release that ships its OpenAPI document")
    return path


def schema_dir(k8s_version: str, cache_dir: Path) -> Path:
    """<cache>/k8s-schemas/<version>-<format>/: the schemas of that release, made once and published in one rename."""
    final = Path(cache_dir) / "k8s-schemas" / f"{k8s_version}-{_SCHEMA_FORMAT}"
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    log(f"    JSON schemas of Kubernetes {k8s_version} from its OpenAPI document into {final} (once)")
    schemas = convert(json.loads(swagger_file(k8s_version).read_text()))
    staging = Path(tempfile.mkdtemp(prefix=".tmp-schemas-", dir=final.parent))
    try:
        for name, schema in schemas.items():
            (staging / name).write_text(json.dumps(schema, sort_keys=True, separators=(",", ":")))
        os.chmod(staging, 0o755)
        try:
            os.replace(staging, final)
        except OSError:  # another process published the same schemas first
            if not final.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def kubeconform(cache_dir: Path) -> Path:
    """The pinned kubeconform, built from the Go module proxy once."""
    return gotool.installed_tool(cache_dir, "kubeconform", KUBECONFORM, KUBECONFORM_VERSION)


def check(objects: list[dict], k8s_version: str, cache_dir: Path) -> list[str]:
    """`kubeconform -strict` over the objects against the release's schemas: one line per refusal
    (an object of a kind the release does not serve is one too)."""
    schemas = schema_dir(k8s_version, cache_dir)
    with tempfile.TemporaryDirectory(prefix="kubeconform-") as tmp:
        manifest = Path(tmp) / "objects.yaml"
        manifest.write_text(yaml.safe_dump_all(objects, sort_keys=True))
        proc = subprocess.run([str(kubeconform(cache_dir)), "-strict", "-output", "json", "-summary",
                               "-schema-location", f"{schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
                               str(manifest)], capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout or "{}")
    except json.JSONDecodeError:
        report = {}
    if "summary" not in report:
        raise UserError(f"kubeconform gave no report (exit {proc.returncode}): "
                        f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
    problems = []
    for res in report.get("resources") or []:
        if res.get("status") in ("statusInvalid", "statusError"):
            # The message holds every failed rule ("- at '/spec/x': got string, want integer");
            # drop the generic "validation failed" parents.
            parts = [p.strip() for p in str(res.get("msg", "")).split(" - at ")[1:]]
            details = [p for p in parts if not p.endswith(": validation failed")] or [str(res.get("msg", ""))]
            problems.append(f"{res.get('kind')} {res.get('name')}: {'; '.join(details)}")
    return problems
