"""The inputs of `explain`: the pod, the cluster's kubeconfig (the one kubeconfig rule) and what to show."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import kubeclient
from scheduler_build.errors import UserError
from scheduler_build.inputs.common import kubeconfig_path, option, spec_at


@dataclass(frozen=True)
class ExplainInputs:
    pod: str
    namespace: str
    kubeconfig: str  # checked to be a kubeconfig
    context: str  # empty: the kubeconfig's current-context
    top: int  # how many of the best-scored nodes to show
    pod_label: str | None  # the spec's debuggable.podLabel (--spec): tells 'not opted in' from 'no recorder'


def required_kubeconfig(c: Any, flag: str | None) -> str:
    """The one kubeconfig rule, and none at all refused (deploy, explain)."""
    chosen = kubeconfig_path(c, flag)
    if not chosen:
        raise UserError("no kubeconfig given", "pass --kubeconfig K (or set deploy.kubeconfig / $KUBECONFIG)")
    kubeclient.check_kubeconfig(chosen)
    return chosen


def explain_inputs(c: Any, *, pod: str, namespace: str = "default", kubeconfig: str | None = None,
                   context: str | None = None, top: Any = 3, spec: str | None = None) -> ExplainInputs:
    try:
        shown = int(top)
    except ValueError:
        raise UserError(f"--top {top!r} is not a number", "e.g. --top 5") from None
    if shown < 0:
        raise UserError(f"--top {shown} is negative", "e.g. --top 5")
    return ExplainInputs(pod=pod, namespace=namespace, kubeconfig=required_kubeconfig(c, kubeconfig),
                         context=option(c, "deploy.context", context) or "", top=shown,
                         pod_label=spec_at(Path(spec)).debuggable.pod_label if spec else None)
