"""`inv deploy`'s part in the scheduler <-> extender mutual TLS: make, keep or rotate the certificates.

The rendered objects say whether TLS is on: the extender Deployment carries the
annotation naming the Service host its serving certificate must cover
(extender_tls.SERVICE_ANNOTATION). Then deploy reads the three Secrets, plans
(extender_tls.plan), and adds the Secrets to what it applies, with the public
certificates' digest as a pod-template annotation of both Deployments: the pods
read their certificates once at start, so a change of certificates rolls them and
unchanged certificates roll nothing. A rotation applies extender_tls.rotation_steps
one after another, each rolled out completely before the next.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass
from typing import Any, Callable

from scheduler_build.config import extender_tls
from scheduler_build.errors import UserError
from scheduler_build.progress import log


@dataclass(frozen=True)
class Target:
    namespace: str
    extender: str  # the extender Deployment's (and Service's) name
    service_host: str
    labels: dict


def target(objects: list[dict]) -> Target | None:
    """The extender the objects deploy with TLS, or None (no extender, or tls: false)."""
    for obj in objects:
        meta = obj.get("metadata") or {}
        host = (meta.get("annotations") or {}).get(extender_tls.SERVICE_ANNOTATION)
        if obj.get("kind") == "Deployment" and host:
            return Target(meta.get("namespace", "default"), meta["name"], host, dict(meta.get("labels") or {}))
    return None


def with_certs(objects: list[dict], tgt: Target, certs: extender_tls.Certs) -> list[dict]:
    """The objects plus the Secrets, every Deployment of the namespace annotated with the certificates' digest."""
    out = copy.deepcopy(objects)
    for obj in out:
        if obj.get("kind") == "Deployment" and (obj.get("metadata") or {}).get("namespace") == tgt.namespace:
            template_meta = obj["spec"]["template"].setdefault("metadata", {})
            template_meta.setdefault("annotations", {})[extender_tls.CERTS_ANNOTATION] = certs.fingerprint()
    return out + extender_tls.secret_objects(extender_tls.layout(tgt.extender), tgt.namespace, tgt.labels, certs)


def read_existing(client: Any, tgt: Target) -> extender_tls.Certs | None:
    """The certificates the cluster holds now (None when any Secret is missing)."""
    from kubernetes import client as k8s  # heavy optional: only when deploying
    from kubernetes.client.rest import ApiException

    core = k8s.CoreV1Api(client)
    names = extender_tls.layout(tgt.extender)
    found = []
    for name in (names.ca_secret, names.serving_secret, names.client_secret):
        try:
            found.append(core.read_namespaced_secret(name, tgt.namespace).data)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise UserError(f"reading Secret {tgt.namespace}/{name} failed: {exc.status} {exc.reason}",
                            "the kubeconfig's user needs get on secrets in that namespace") from None
    return extender_tls.certs_from_secrets(*found)


def prepare(client: Any, objects: list[dict], rotate: bool, dry_run: bool, wait: bool,
            apply_and_roll: Callable[[list[dict]], None]) -> list[dict]:
    """The objects to apply, certificates included. A rotation's intermediate steps are applied
    and rolled out here (apply_and_roll); the returned objects are its last step."""
    tgt = target(objects)
    if tgt is None:
        if rotate:
            raise UserError("--rotate-certs: these objects deploy no extender with TLS",
                            "the spec's referenceExtender must be enabled with tls (the default)")
        return objects
    if dry_run:
        log("    extender certificates: not made in a dry run (a real deploy creates the Secrets)")
        return objects
    sans = extender_tls.dns_names(tgt.extender, tgt.namespace)
    if tgt.service_host not in sans:
        raise UserError(f"the extender's Service host {tgt.service_host} is not one of {', '.join(sans)}",
                        "re-render the manifests")
    existing = read_existing(client, tgt)
    plan = extender_tls.plan(existing, sans, dt.datetime.now(dt.timezone.utc), rotate=rotate)
    log(f"    extender certificates: {plan.action}{': ' + '; '.join(plan.reasons) if plan.reasons else ''}")
    if plan.action == "keep" and existing is not None:
        return with_certs(objects, tgt, existing)
    new_ca, new = extender_tls.issue(tgt.extender, tgt.namespace)
    if plan.action == "create" or existing is None:
        return with_certs(objects, tgt, new)
    if not wait:
        raise UserError("rotating the extender certificates needs each step rolled out before the next",
                        "run without --no-wait")
    steps = extender_tls.rotation_steps(existing, new_ca, new)
    for number, step in enumerate(steps[:-1], 1):
        log(f"    rotation step {number}/{len(steps)}: "
            f"{'CA bundle trusts old and new CA' if number == 1 else 'new leaf certificates'}")
        apply_and_roll(with_certs(objects, tgt, step))
    log(f"    rotation step {len(steps)}/{len(steps)}: CA bundle trusts the new CA only")
    return with_certs(objects, tgt, steps[-1])
