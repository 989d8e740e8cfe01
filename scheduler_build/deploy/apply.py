"""`inv deploy`: server-side apply of the rendered objects, then wait for the Deployment.

Objects come from a rendered directory (its kustomization.yaml lists them) or are
rendered in memory from a spec. Each is applied with the kubernetes client's
server-side apply under the field manager `scheduler-build` (conflicts forced:
this tool owns the fields it renders), in dependency order (Namespace first).
`dry_run` uses the API server's own dry run, so admission and validation still
run and nothing is persisted.

Waiting for the Deployment, and saying why it is not available, is `deploy/rollout.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from scheduler_build import kubeclient
from scheduler_build import spec as spec_mod
from scheduler_build.config import schemas, target
from scheduler_build.deploy import rollout, skew, tls
from scheduler_build.errors import UserError
from scheduler_build.progress import log

FIELD_MANAGER = "scheduler-build"
KUSTOMIZATION = "kustomization.yaml"
# Apply order: what others depend on first.
KIND_ORDER = ("Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
              "ConfigMap", "Secret", "Service", "NetworkPolicy", "PodDisruptionBudget", "Deployment")


@dataclass
class Applied:
    kind: str
    name: str
    namespace: str
    result: str  # "applied", "dry-run ok", "skipped: ..."


@dataclass
class DeployReport:
    applied: list[Applied] = field(default_factory=list)
    available: bool | None = None  # None: not waited for
    reasons: list[str] = field(default_factory=list)
    deployments: list[str] = field(default_factory=list)
    skew: dict | None = None  # the scheduler/API server pair and the policy's verdict (None: not checked)

    def as_dict(self) -> dict:
        return {"applied": [a.__dict__ for a in self.applied], "available": self.available,
                "reasons": self.reasons, "deployments": self.deployments, "version_skew": self.skew}


def load_dir(directory: Path) -> list[dict]:
    """The objects of a rendered directory, in the order its kustomization.yaml lists them."""
    directory = Path(directory)
    if not (directory / KUSTOMIZATION).is_file():
        raise UserError(f"{directory} has no {KUSTOMIZATION}", "render it first: inv config.render --spec S --out DIR")
    return kustomized(lambda name: (directory / name).read_text() if (directory / name).is_file() else None, str(directory))


def load_files(files: dict[str, str]) -> list[dict]:
    """The objects of a rendering held in memory (config.render.render_files), in its kustomization's order."""
    return kustomized(files.get, "the rendered objects")


def kustomized(read: Callable[[str], str | None], where: str) -> list[dict]:
    """A rendering's objects as deploy applies them: each resource its kustomization lists, read through
    `read(name)` (None: missing), in order; a missing or broken one is an error. (config/output and
    config/chart read the same list for their own purposes, leniently.)"""
    kust = f"{where}/{KUSTOMIZATION}"
    try:
        resources = (yaml.safe_load(read(KUSTOMIZATION) or "") or {}).get("resources") or []
    except yaml.YAMLError as exc:
        raise UserError(f"{kust}: invalid YAML: {exc}") from None
    objects: list[dict] = []
    for name in resources:
        text = read(name)
        if text is None:
            raise UserError(f"{kust} lists {name}, which does not exist", "re-render the directory")
        try:
            objects += [d for d in yaml.safe_load_all(text) if d]
        except yaml.YAMLError as exc:
            raise UserError(f"{where}/{name}: invalid YAML: {exc}") from None
    return objects


def ordered(objects: list[dict]) -> list[dict]:
    def key(obj: dict) -> tuple:
        kind = obj.get("kind", "")
        return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER),)

    return sorted(objects, key=key)  # stable: same-kind objects keep the rendered order


def _api_error(exc: Exception) -> str:
    """The API server's own message from an ApiException/DynamicApiError."""
    body = getattr(exc, "body", None)
    if body:
        try:
            return json.loads(body).get("message") or str(body)
        except (ValueError, AttributeError):
            return str(body)
    return str(getattr(exc, "summary", lambda: exc)() if callable(getattr(exc, "summary", None)) else exc)


def apply(client: Any, objects: list[dict], dry_run: bool = False,
          offline_check: Callable[[list[dict]], list[str]] | None = None) -> list[Applied]:
    """Server-side apply each object; stop at the first refusal with the server's reason.

    In a dry run, an object in a namespace this apply creates cannot be checked by the server
    (the dry run persisted no namespace): `offline_check` judges those (one line per problem)."""
    from kubernetes.dynamic import DynamicClient  # heavy optional: only when applying
    from kubernetes.dynamic.exceptions import DynamicApiError, ResourceNotFoundError
    from urllib3.exceptions import HTTPError as Urllib3Error

    try:
        dynamic = DynamicClient(client)
    except (Urllib3Error, OSError) as exc:
        raise UserError(f"cannot reach the API server at {client.configuration.host}: {exc}",
                        "check the kubeconfig's server and that the cluster is up") from None
    except DynamicApiError as exc:
        raise UserError(f"the API server refused discovery: {_api_error(exc)}", "check the kubeconfig's credentials") from None
    results: list[Applied] = []
    new_namespaces: set[str] = set()
    deferred: list[dict] = []
    for obj in ordered(objects):
        kind, api_version = obj.get("kind", ""), obj.get("apiVersion", "")
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "")
        try:
            resource = dynamic.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError:
            raise UserError(f"the API server does not serve {api_version} {kind} ({name})",
                            "the cluster is too old or lacks that API") from None
        if dry_run and namespace and namespace in new_namespaces:
            # A server dry run persists nothing, so the namespace it "created" does not exist yet.
            deferred.append(obj)
            continue
        try:
            dynamic.server_side_apply(resource, body=obj, namespace=namespace or None, field_manager=FIELD_MANAGER,
                                      force_conflicts=True, dry_run="All" if dry_run else None)
        except DynamicApiError as exc:
            raise UserError(f"applying {kind} {namespace + '/' if namespace else ''}{name} failed: "
                            f"{getattr(exc, 'status', '')} {_api_error(exc)}".replace("  ", " "),
                            "RBAC: the kubeconfig's user needs rights to create these objects (and to bind the "
                            "system:kube-scheduler roles)" if getattr(exc, "status", 0) == 403 else
                            "the server's message says which field") from None
        if dry_run and kind == "Namespace":
            try:
                resource.get(name=name)
            except DynamicApiError:
                new_namespaces.add(name)
        results.append(Applied(kind, name, namespace, "dry-run ok" if dry_run else "applied"))
        log(f"    {kind} {namespace + '/' if namespace else ''}{name}: {results[-1].result}")
    return results + check_offline(deferred, offline_check)


def check_offline(deferred: list[dict], offline_check: Callable[[list[dict]], list[str]] | None) -> list[Applied]:
    """The dry run's objects in namespaces it creates, judged offline (or reported unchecked without a judge)."""
    if not deferred:
        return []
    problems = offline_check(deferred) if offline_check else []
    if problems:
        for problem in problems:
            log(f"    schema: {problem}")
        raise UserError(f"{len(problems)} of the objects in namespaces this apply creates fail the offline schema "
                        f"check: {problems[0]}", "fix the spec or the rendered file; every problem is listed above")
    out = []
    for obj in deferred:
        meta = obj.get("metadata") or {}
        result = (f"schema ok (offline: namespace {meta.get('namespace')} is created by this apply)" if offline_check
                  else f"not checked: namespace {meta.get('namespace')} is created by this apply")
        out.append(Applied(obj.get("kind", ""), meta.get("name", ""), meta.get("namespace", ""), result))
        log(f"    {out[-1].kind} {out[-1].namespace}/{out[-1].name}: {result}")
    return out


def server_version(client: Any) -> str:
    """The API server's release (v1.36.3, from /version): the skew check's and the offline check's."""
    from kubernetes import client as k8s  # heavy optional: only when deploying
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError as Urllib3Error

    try:
        return str(k8s.VersionApi(client).get_code().git_version).split("+", 1)[0]
    except (Urllib3Error, OSError) as exc:
        raise UserError(f"cannot reach the API server at {client.configuration.host}: {exc}",
                        "check the kubeconfig's server and that the cluster is up") from None
    except ApiException as exc:
        raise UserError(f"the API server refused /version: {exc.status} {exc.reason}",
                        "check the kubeconfig's credentials") from None


def scheduler_version_of(objects: list[dict]) -> str:
    """The Kubernetes release of a rendered scheduler, from its image's default tag (<k8s-version>-<version>),
    or "" when the tag does not start with one (a tag set by hand)."""
    for obj in objects:
        if obj.get("kind") != "Deployment":
            continue
        for container in (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []:
            if container.get("name") == "kube-scheduler":
                tag = str(container.get("image", "")).split("@", 1)[0].rpartition("/")[2].partition(":")[2]
                return skew.tag_version(tag)
    return ""


def check_skew(client: Any, scheduler: str, allow: bool) -> dict | None:
    """The API server's version first, then the policy: a refused pair is a UserError unless `allow`."""
    server = server_version(client)
    if not scheduler:
        log(f"    warning: version skew not checked: the scheduler's Kubernetes version is unknown (its image tag "
            f"names none); the API server is {server}; deploy --spec S checks it")
        return None
    try:
        found = skew.verdict(scheduler, server)
    except ValueError as exc:  # a server reporting no usable version: say so, do not guess
        log(f"    warning: version skew not checked: the API server's {exc}")
        return None
    if not found.ok and not allow:
        raise UserError(found.reason, skew.hint(found))
    log(f"    version skew: scheduler {scheduler}, API server {server}: "
        + ("within the policy" if found.ok else "outside the policy, allowed by --allow-version-skew"))
    return found.as_dict()


def schema_check(client: Any, cache_dir: Path) -> Callable[[list[dict]], list[str]]:
    """kubeconform against the server's own release's OpenAPI, generated offline (config.schemas)."""
    return lambda objects: schemas.check(objects, server_version(client), cache_dir)


def skew_pair(spec_path: str | Path, server: str, cache_dir: Path) -> dict:
    """The scheduler a spec targets beside the API server `server`, judged by the skew policy
    (deploy/skew.py), for `doctor --kubeconfig` and `cluster.status`. Without a readable spec, or when its
    version cannot be resolved, the scheduler side is None with the reason, and the allowed minors are still said."""
    try:
        allowed = list(skew.allowed_minors(server))
    except ValueError:
        allowed = []
    pair = {"scheduler": None, "apiserver": server, "ok": None, "reason": "", "allowed_scheduler_minors": allowed}
    if not allowed:
        return {**pair, "reason": f"the API server's version is unknown ({server!r})"}
    if not Path(spec_path).is_file():
        return {**pair, "reason": f"no spec at {spec_path}: pass --spec or set spec.path to judge a scheduler"}
    try:
        release = target.kubernetes_release(spec_mod.load(spec_path), None, cache_dir)
        return skew.verdict(release, server).as_dict()
    except UserError as exc:
        return {**pair, "reason": f"the spec's version is unknown: {exc.message}"}


def deploy(objects: list[dict], kubeconfig: Path, context: str | None, *, dry_run: bool, wait: bool, timeout: float,
           rotate_certs: bool, cache_dir: Path | None, scheduler_version: str, allow_skew: bool) -> DeployReport:
    """Apply `objects` (dry run or not) and wait. The API server's version is read first: a scheduler
    (`scheduler_version`; "" when unknown) outside the skew policy is refused before anything is applied."""
    client = kubeclient.from_kubeconfig(kubeconfig, context)
    report = DeployReport()
    report.skew = check_skew(client, scheduler_version, allow_skew)
    report.deployments = [f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
                          for o in objects if o.get("kind") == "Deployment"]
    targets = [tuple(d.split("/", 1)) for d in report.deployments]
    rotating: list[bool] = []

    def apply_and_roll(step: list[dict]) -> None:
        rotating.append(True)
        apply(client, step)
        ok, reasons = rollout.wait_available(client, targets, timeout, check=rollout.rolled_out)  # type: ignore[arg-type]
        if not ok:
            for reason in reasons:
                log(f"    why: {reason}")
            raise UserError(f"certificate rotation stopped: {', '.join(report.deployments)} did not roll out "
                            f"in {timeout:g}s: {reasons[0] if reasons else 'no reason reported'}",
                            "fix the cause and run inv deploy --rotate-certs again (every step is safe to repeat)")

    objects = tls.prepare(client, objects, rotate_certs, dry_run, wait, apply_and_roll)
    report.applied = apply(client, objects, dry_run=dry_run,
                           offline_check=schema_check(client, cache_dir) if cache_dir else None)
    if dry_run or not wait:
        return report
    log(f"    waiting up to {timeout:g}s for {', '.join(report.deployments)} to become available")
    report.available, report.reasons = rollout.wait_available(  # type: ignore[arg-type]
        client, targets, timeout, check=rollout.settled(bool(rotating)))
    return report
