"""The extender's mutual-TLS Secrets as a file, for GitOps (`config.render --tls-secrets DIR`).

`inv deploy` makes the three Secrets in the cluster. A team that applies the
rendered kustomization with Argo CD or Flux instead takes them from
DIR/extender-tls-secrets.yaml, written apart from the kustomization (it holds
private keys) for its own secret tooling (Sealed Secrets, SOPS, an external
secret store). The names are extender_tls.layout's, the ones the rendered
Deployments mount. A re-render keeps certificates that are still good (same
bytes, so nothing rolls), makes them when missing, and replaces them with a new
set when they expire within extender_tls.RENEW_BEFORE_DAYS or no longer fit.
Their fingerprint goes into both Deployments' pod templates, so new
certificates roll both.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import yaml

from scheduler_build.config import extender_tls
from scheduler_build import spec as spec_mod
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.spec import Spec

FILE = "extender-tls-secrets.yaml"


@dataclass
class Result:
    path: Path
    action: str  # keep, create or rotate
    reasons: list[str]
    certs: extender_tls.Certs


def _existing(path: Path, names: extender_tls.Layout) -> extender_tls.Certs | None:
    if not path.is_file():
        return None
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: invalid YAML: {exc}", "remove the file to make new certificates") from None
    by_name = {(d.get("metadata") or {}).get("name"): d.get("data") for d in docs if d.get("kind") == "Secret"}
    return extender_tls.certs_from_secrets(by_name.get(names.ca_secret), by_name.get(names.serving_secret),
                                           by_name.get(names.client_secret))


def write(spec: Spec, out_dir: Path, labels: dict, now: dt.datetime | None = None) -> Result:
    """Keep, make or replace the Secrets in out_dir/FILE (mode 0600, written atomically)."""
    ext = spec.reference_extender
    if not (ext.enabled and ext.tls):
        raise UserError(f"--tls-secrets: {spec.path} deploys no extender with TLS",
                        "enable referenceExtender (tls is on by default) or drop --tls-secrets")
    name = spec_mod.reference_extender_name(spec)
    names = extender_tls.layout(name)
    path = Path(out_dir) / FILE
    existing = _existing(path, names)
    plan = extender_tls.plan(existing, extender_tls.dns_names(name, spec.namespace),
                             now or dt.datetime.now(dt.timezone.utc))
    certs = existing if plan.action == "keep" and existing is not None else extender_tls.issue(name, spec.namespace)[1]
    if certs is not existing:
        text = yaml.safe_dump_all(extender_tls.secret_objects(names, spec.namespace, labels, certs),
                                  sort_keys=True, explicit_start=True)
        write_atomic(path, text, mode=0o600)
    return Result(path, plan.action, plan.reasons, certs)
