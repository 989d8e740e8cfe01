"""Scheduler configuration and manifests from the build spec: pure rendering, no I/O but the output.

`render(spec, out, image=...)` writes the KubeSchedulerConfiguration
(kubescheduler.config.k8s.io/v1, built by config.schedulerconfig) plus every
object that runs it as a second scheduler, atomically as one directory with a
kustomization.yaml. `render_files` is the same without writing.

Manifest templates live in templates/config/; every value goes through `tojson`
and the rendered text is parsed and dumped again by yaml (sorted keys), so the
output is deterministic and no YAML is ever assembled by hand. Validation (field
checks, the real binary) is config.validate.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler_build.build import debuggable
from scheduler_build.config import extender_tls
from scheduler_build import spec as spec_mod
from scheduler_build.config import output, schedulerconfig
from scheduler_build.errors import UserError
from scheduler_build.image.info import ImageInfo
from scheduler_build.spec import Spec
from scheduler_build.spec.formats import IMAGE_REPO, IMAGE_TAG
from scheduler_build.templating import render as render_template

CONFIG_FILE = "kube-scheduler-config.yaml"
# The reference extender's resources. A memory limit (its cache grows with the cluster's nodes and
# pods); no CPU limit: a throttled extender answers late, and the scheduler waits for it.
EXTENDER_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
MANAGED_BY = "scheduler-build"


# --- YAML output -----------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """safe_dump with block literals for multi-line strings (the ConfigMap's config)."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_representer)


def dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=100)


def dump_all(docs: list[Any]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True,
                         width=100, explicit_start=True)


def template_docs(template: str, **context: Any) -> list[Any]:
    """Render a template and parse it back: the serializer, not the template, writes the YAML."""
    text = render_template(f"config/{template}", **context)
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


# --- names -----------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    configmap: str
    config_key: str
    service_account: str
    lease_role: str
    extender: str


def names_for(spec: Spec) -> Names:
    return Names(
        configmap=f"{spec.name}-config",
        config_key="config.yaml",
        service_account=spec.name,
        lease_role=f"{spec.name}-leader-election",
        extender=spec_mod.reference_extender_name(spec),
    )


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def check_image_flag(ref: str, flag: str = "--image") -> str:
    """An image reference given on the command line: REPOSITORY[:TAG][@sha256:DIGEST], or one UserError."""
    name, at, digest = ref.partition("@")
    head, _, last = name.rpartition("/")
    base, colon, tag = last.partition(":")
    repo = f"{head}/{base}" if head else base
    if not (IMAGE_REPO.match(repo) and (not colon or IMAGE_TAG.match(tag)) and (not at or _DIGEST.match(digest))):
        raise UserError(f"{flag} {ref!r}: not an image reference",
                        "use REPOSITORY[:TAG][@sha256:DIGEST], e.g. registry.example.com/acme/kube-scheduler:v1.36.3-0.1.0")
    return ref


def pin(ref: str, recorded: ImageInfo | None, where: str) -> str:
    """`ref` by digest: REPO:TAG@<the index digest image-info.json (`recorded`, read from `where`) records
    for that repository and tag>, the digest image.push pushes unchanged. One UserError when it holds none."""
    repo, _, tag = ref.rpartition(":")
    if "@" in ref:
        return ref
    if recorded is None or recorded.repository != repo or tag not in recorded.tags \
            or not _DIGEST.match(recorded.index_digest):
        raise UserError(f"--pin-digest: {where} records no image {ref}",
                        "build it first (inv image.build --spec S; image.push pushes that digest), "
                        "or pass --image REF@sha256:DIGEST")
    return f"{ref}@{recorded.index_digest}"


def image_ref(spec: Spec, k8s_version: str) -> str:
    """The scheduler image: the spec's repository with its tag (default <k8s-version>-<version>)."""
    tag = spec.image.tag or spec_mod.default_image_tag(spec, k8s_version)
    if spec.debuggable.enabled and not spec.image.tag:  # image.build --debuggable's tag (docs/explain.md)
        tag = f"{tag}-{debuggable.SUFFIX}"
    return f"{spec.image.repository}:{tag}"


# --- rendering -------------------------------------------------------------


def config_text(spec: Spec) -> str:
    """The KubeSchedulerConfiguration YAML for the spec (extenders include the reference one)."""
    return dump(schedulerconfig.for_spec(spec))


def render_files(spec: Spec, image: str, tls_fingerprint: str = "") -> dict[str, str]:
    """Every output file name -> content. Pure: the same spec gives the same bytes.
    `tls_fingerprint`: the extender certificates' (config.tls_secrets), annotated on both pod templates."""
    names = names_for(spec)
    config = config_text(spec)
    labels, selector = labels_for(spec), selector_for(spec)
    context = dict(spec=spec, names=names, labels=labels, selector=selector, config_text=config,
                   flags=spec_mod.scheduler_flags(spec),
                   config_sha256=hashlib.sha256(config.encode()).hexdigest(), image=image,
                   config_mount=f"/etc/kubernetes/{spec.name}", tls=tls_context(spec),
                   affinity=spread(selector, spec.deployment.replicas),
                   certs_annotation={extender_tls.CERTS_ANNOTATION: tls_fingerprint} if tls_fingerprint else {})
    files: dict[str, str] = {CONFIG_FILE: config}
    resources: list[str] = []

    def add(name: str, template: str, **extra: Any) -> None:
        files[name] = dump_all(template_docs(template, **context, **extra))
        resources.append(name)

    # kube-system and default exist in every cluster; any other namespace is ours to create.
    if spec.namespace not in ("kube-system", "default"):
        add("namespace.yaml", "namespace.yaml.j2")
    add("serviceaccount.yaml", "serviceaccount.yaml.j2")
    add("rbac.yaml", "rbac.yaml.j2")
    add("configmap.yaml", "configmap.yaml.j2")
    add("deployment.yaml", "deployment.yaml.j2")
    ext = spec.reference_extender
    ext_labels, ext_selector = extender_labels_for(spec), extender_selector_for(spec)
    context.update(extender_labels=ext_labels, extender_selector=ext_selector, extender_ports=extender_ports(spec),
                   extender_resources=EXTENDER_RESOURCES,
                   extender_affinity=spread(ext_selector, ext.replicas if ext.enabled else 1))
    if ext.enabled:
        add("extender.yaml", "extender.yaml.j2")
    add("networkpolicy.yaml", "networkpolicy.yaml.j2")
    budgets = [(spec.name, selector, labels)] if spec.deployment.replicas > 1 else []
    if ext.enabled and ext.replicas > 1:
        budgets.append((names.extender, ext_selector, ext_labels))
    if budgets:
        add("pdb.yaml", "pdb.yaml.j2", budgets=budgets)
    (kustomization,) = template_docs("kustomization.yaml.j2", resources=resources)
    files["kustomization.yaml"] = dump(kustomization)
    return files


RENDERED_NAMES = {CONFIG_FILE, "namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml",
                  "deployment.yaml", "extender.yaml", "networkpolicy.yaml", "pdb.yaml", "kustomization.yaml"}


def spread(selector: dict, replicas: int) -> dict:
    """Pod anti-affinity for a Deployment of more than one replica (empty for one): preferred,
    not required, so a one-node cluster still runs every replica."""
    if replicas <= 1:
        return {}
    term = {"labelSelector": {"matchLabels": selector}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": term}]}}


def extender_ports(spec: Spec) -> list[dict]:
    """The TCP ports of the spec's own extenders' urlPrefix (443/80 by scheme when none is given)."""
    ports = set()
    for entry in spec.extenders:
        url = urllib.parse.urlsplit(str(entry.get("urlPrefix", "")))
        try:
            ports.add(url.port or (443 if url.scheme == "https" else 80))
        except ValueError:  # an invalid port: the spec's own checks report it
            continue
    return [{"port": port, "protocol": "TCP"} for port in sorted(ports)]


def tls_context(spec: Spec) -> dict:
    """What the templates need for the scheduler <-> extender mutual TLS: Secret names and mount
    paths only (the certificates themselves are Secrets that inv deploy applies)."""
    ext = spec.reference_extender
    on = ext.enabled and ext.tls
    context: dict[str, Any] = {"enabled": on}
    if on:
        secrets = extender_tls.layout(spec_mod.reference_extender_name(spec))
        context.update(secrets=secrets.__dict__, scheduler_dir=extender_tls.SCHEDULER_TLS_DIR,
                       extender_dir=extender_tls.EXTENDER_TLS_DIR, ca_key=extender_tls.CA_KEY,
                       health_port=extender_tls.health_port(ext.port),
                       service_host=spec_mod.reference_extender_service_host(spec),
                       service_annotation=extender_tls.SERVICE_ANNOTATION)
    return context


def labels_for(spec: Spec) -> dict[str, str]:
    """The scheduler's objects' labels; a debuggable build's say so (docs/explain.md)."""
    marked = {debuggable.LABEL: "true"} if spec.debuggable.enabled else {}
    return {**selector_for(spec), "app.kubernetes.io/managed-by": MANAGED_BY, **marked}


def selector_for(spec: Spec) -> dict[str, str]:
    return {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/component": "scheduler"}


def extender_labels_for(spec: Spec) -> dict[str, str]:
    return {**extender_selector_for(spec), "app.kubernetes.io/part-of": spec.name,
            "app.kubernetes.io/managed-by": MANAGED_BY}


def extender_selector_for(spec: Spec) -> dict[str, str]:
    return {"app.kubernetes.io/name": spec_mod.reference_extender_name(spec), "app.kubernetes.io/component": "extender"}


def render(spec: Spec, out: Path, image: str, plain: bool = False) -> dict[str, str]:
    """Render and write to `out` (config.output: a symlink swap, or with `plain` a plain directory)."""
    files = render_files(spec, image)
    output.write(files, Path(out), RENDERED_NAMES, plain=plain)
    return files
