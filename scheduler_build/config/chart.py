"""A Helm chart from the spec (`inv config.chart`): the same objects config.render writes, with the
values teams change per cluster lifted into values.yaml.

Built from config.render's own output, not written by hand, so the chart cannot drift from the
binary: the scheduler configuration is the spec's (rendered twice when the spec has the reference
extender: with it and without it, chosen by `extender.enabled`). The objects are rendered, given
placeholder values where a value belongs (`__helm_<what>__`), dumped by the one YAML serializer and
the placeholders replaced by Go template actions. With the default values, `helm template` gives
exactly config.render's objects (a test holds it to that), plus, with the extender's mutual TLS, the
three Secrets that `inv deploy` would make: here Helm makes them (genCA/genSignedCert) on install and
keeps them on upgrade (lookup).

Chart version = the spec's `version` (SemVer, which Helm requires); appVersion = the image tag.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import yaml

from scheduler_build import owned
from scheduler_build.config import extender_tls
from scheduler_build.golang import gotool
from scheduler_build import spec as spec_mod
from scheduler_build.config import render
from scheduler_build.errors import UserError
from scheduler_build.spec import Spec
from scheduler_build.templating import render as render_template

HELM = "helm.sh/helm/v3/cmd/helm"
HELM_VERSION = "v3.22.0"
# Every path a chart may hold (what config.chart writes and may remove again).
HELMIGNORE = ".helmignore"
CHART_NAMES = {"Chart.yaml", "values.yaml", HELMIGNORE, "templates/extender-tls-secrets.yaml",
               *(f"templates/{name}" for name in render.RENDERED_NAMES)}
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
_PLACEHOLDER = re.compile(r"^(?P<indent>\s*)(?P<dash>- )?(?P<key>[\w.-]+): __helm_(?P<what>\w+)__$")
IF_EXTENDER = "{{- if .Values.extender.enabled }}"
IMAGE = ('{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}'
         '{{ with .Values.image.digest }}@{{ . }}{{ end }}')


def split_image(ref: str) -> tuple[str, str, str]:
    """REPOSITORY[:TAG][@DIGEST] -> (repository, tag, digest)."""
    name, _, digest = ref.partition("@")
    head, _, last = name.rpartition("/")
    base, _, tag = last.partition(":")
    return (f"{head}/{base}" if head else base), tag, digest


def _block(indent: str, key: str, expr: str, wrap: str = "") -> str:
    """`key:` followed by `expr` as YAML at the right depth; `wrap`: a condition (`with` rebinds `.`)."""
    depth = len(indent) + 2
    body = f"{indent}{key}:\n{{{{- toYaml {expr} | nindent {depth} }}}}"
    return f"{{{{- {wrap} }}}}\n{body}\n{{{{- end }}}}" if wrap else body


def _actions(spec: Spec, affinity: dict, ext_affinity: dict) -> dict[str, Any]:
    """Placeholder -> the template text for a `key: __helm_x__` line (a function of indent and key)."""
    def scalar(expr: str):
        return lambda indent, key: f"{indent}{key}: {expr}"

    def aff(values: str, value: dict):
        text = yaml.safe_dump(value, sort_keys=True, default_flow_style=True, width=10_000).strip()
        return lambda indent, key: (f"{{{{- if gt (int {values}) 1 }}}}\n{indent}{key}: {text}\n{{{{- end }}}}")

    return {
        "replicas": scalar("{{ .Values.replicas }}"),
        "image": scalar(f"{IMAGE!s}"),
        "pullPolicy": scalar("{{ .Values.image.pullPolicy }}"),
        "resources": lambda indent, key: _block(indent, key, ".Values.resources"),
        "nodeSelector": lambda indent, key: _block(indent, key, ".", "with .Values.nodeSelector"),
        "tolerations": lambda indent, key: _block(indent, key, ".", "with .Values.tolerations"),
        "priorityClassName": lambda indent, key: (
            f"{{{{- with .Values.priorityClassName }}}}\n{indent}{key}: {{{{ . }}}}\n{{{{- end }}}}"),
        "affinity": aff(".Values.replicas", affinity),
        "extReplicas": scalar("{{ .Values.extender.replicas }}"),
        "extImage": scalar("{{ .Values.extender.image }}"),
        "extResources": lambda indent, key: _block(indent, key, ".Values.extender.resources"),
        "extAffinity": aff(".Values.extender.replicas", ext_affinity),
    }


def _fill(text: str, actions: dict[str, Any]) -> str:
    out = []
    for line in text.splitlines():
        match = _PLACEHOLDER.match(line)
        if not match:
            out.append(line)
            continue
        indent = match["indent"] + ("  " if match["dash"] else "")
        filled = actions[match["what"]](indent, match["key"])
        out.append(f"{match['indent']}- {filled.lstrip()}" if match["dash"] else filled)
    return "\n".join(out) + "\n"


def _placeholders(obj: dict, ext_name: str) -> dict:
    """The Deployment with its per-cluster values replaced by placeholders (other kinds unchanged)."""
    if obj.get("kind") != "Deployment":
        return obj
    pod = obj["spec"]["template"]["spec"]
    container = pod["containers"][0]
    if obj["metadata"]["name"] == ext_name:
        obj["spec"]["replicas"] = "__helm_extReplicas__"
        container.update(image="__helm_extImage__", resources="__helm_extResources__")
        pod["affinity"] = "__helm_extAffinity__"
        return obj
    obj["spec"]["replicas"] = "__helm_replicas__"
    container.update(image="__helm_image__", imagePullPolicy="__helm_pullPolicy__", resources="__helm_resources__")
    pod.update(nodeSelector="__helm_nodeSelector__", tolerations="__helm_tolerations__",
               priorityClassName="__helm_priorityClassName__", affinity="__helm_affinity__")
    return obj


def _templates(spec: Spec, files: dict[str, str], actions: dict[str, Any]) -> dict[str, str]:
    names = render.names_for(spec)
    out = {}
    for name in yaml.safe_load(files["kustomization.yaml"])["resources"]:
        if name == "pdb.yaml":
            continue
        docs = [_placeholders(d, names.extender) for d in yaml.safe_load_all(files[name]) if d]
        out[name] = _fill(render.dump_all(docs), actions)
    return out


def _single(spec: Spec) -> Spec:
    """The spec with one replica each: its rendering has no budgets (the chart adds them by value)."""
    ext = dataclasses.replace(spec.reference_extender, replicas=1)
    return dataclasses.replace(spec, deployment=dataclasses.replace(spec.deployment, replicas=1),
                               reference_extender=ext)


def _budgets(spec: Spec, selector: dict, ext_selector: dict) -> str:
    """The PodDisruptionBudgets, each rendered when its Deployment's replicas value is above one."""
    names = render.names_for(spec)
    parts = [("gt (int .Values.replicas) 1", (spec.name, selector, render.labels_for(spec)))]
    if spec.reference_extender.enabled:
        parts.append(("and .Values.extender.enabled (gt (int .Values.extender.replicas) 1)",
                      (names.extender, ext_selector, render.extender_labels_for(spec))))
    return "".join(f"{{{{- if {condition} }}}}\n{render.dump_all(render.template_docs('pdb.yaml.j2', spec=spec, budgets=[budget]))}"
                   "{{- end }}\n" for condition, budget in parts)


def values_for(spec: Spec, image: str) -> dict:
    repository, tag, digest = split_image(image)
    values: dict[str, Any] = {
        "image": {"repository": repository, "tag": tag, "digest": digest, "pullPolicy": spec.image.pull_policy},
        "replicas": spec.deployment.replicas, "resources": spec.deployment.resources,
        "nodeSelector": spec.deployment.node_selector, "tolerations": [],
        "priorityClassName": spec.deployment.priority_class_name,
    }
    ext = spec.reference_extender
    if ext.enabled:
        values["extender"] = {"enabled": True, "image": ext.image, "replicas": ext.replicas,
                              "resources": render.EXTENDER_RESOURCES}
    return values


def chart_files(spec: Spec, image: str) -> dict[str, str]:
    """Every file of the chart (path inside the chart directory -> content). Pure and deterministic."""
    if not SEMVER.match(spec.version):
        raise UserError(f"{spec.path}: version {spec.version!r} is not SemVer (MAJOR.MINOR.PATCH), "
                        "which a Helm chart's version must be", "e.g. version: 1.0.0")
    names = render.names_for(spec)
    selector = render.selector_for(spec)
    ext_selector = render.extender_selector_for(spec)
    actions = _actions(spec, render.spread(selector, 2), render.spread(ext_selector, 2))
    on = _templates(spec, render.render_files(_single(spec), "__helm_image__"), actions)
    files: dict[str, str] = {}
    if spec.reference_extender.enabled:
        off_spec = dataclasses.replace(_single(spec), reference_extender=spec_mod.ReferenceExtender())
        off = _templates(off_spec, render.render_files(off_spec, "__helm_image__"), actions)
        for name in sorted(set(on) | set(off)):
            a, b = on.get(name, ""), off.get(name, "")
            files[f"templates/{name}"] = a if a == b else (
                f"{IF_EXTENDER}\n{a}{{{{- else }}}}\n{b}{{{{- end }}}}\n" if b else f"{IF_EXTENDER}\n{a}{{{{- end }}}}\n")
    else:
        files.update({f"templates/{name}": text for name, text in on.items()})
    files["templates/pdb.yaml"] = _budgets(spec, selector, ext_selector)
    if spec.reference_extender.enabled and spec.reference_extender.tls:
        secrets = extender_tls.layout(names.extender)
        files["templates/extender-tls-secrets.yaml"] = render_template(
            "helm/extender-tls-secrets.yaml.j2", spec=spec, secrets=secrets, ca_key=extender_tls.CA_KEY,
            sans=extender_tls.dns_names(names.extender, spec.namespace), days=extender_tls.DAYS,
            labels=render.extender_labels_for(spec), names=names)
    _, tag, _ = split_image(image)
    files["Chart.yaml"] = render.dump({
        "apiVersion": "v2", "name": spec.name, "version": spec.version, "appVersion": tag or spec.version,
        "type": "application", "description": f"The {spec.name} scheduler, rendered from {spec.path.name} "
                                              "by scheduler-build (regenerate it; do not edit)"})
    files["values.yaml"] = render.dump(values_for(spec, image))
    # The record of what we wrote lives in the chart directory (owned.py) but is no part of the chart:
    # a user's own `helm package` of the directory leaves it out. Written and recorded like every file.
    files[HELMIGNORE] = f"# scheduler-build's record of the files it wrote here: not chart content\n{owned.RECORD}\n"
    return files


def helm(cache_dir: Path) -> Path:
    """The pinned Helm, built from the Go module proxy once (what the tests lint and template with)."""
    return gotool.installed_tool(cache_dir, "helm", HELM, HELM_VERSION)
