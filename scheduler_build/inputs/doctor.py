"""The inputs of `doctor`: what its checks look at, decided before any check runs."""

from __future__ import annotations

from typing import Any

from scheduler_build.doctor.checks import DoctorRequest
from scheduler_build.inputs.common import cache_dir, environment, kubeconfig_path, option


def doctor_inputs(c: Any, *, registry: str | None = None, node: bool = False, kubeconfig: str | None = None,
                  spec: str | None = None) -> DoctorRequest:
    """Every value by the one precedence rule; the kubeconfig by the one kubeconfig rule (a version skew check
    runs when one is found)."""
    return DoctorRequest(
        cache_dir=cache_dir(c), goroot=option(c, "builder.goroot") or "", builder_image=option(c, "builder.image") or "",
        registry=option(c, "registry.url", registry) or "", home=environment("HOME"), gopath=environment("GOPATH"),
        node=bool(node), kubeconfig=kubeconfig_path(c, kubeconfig), spec_path=str(option(c, "spec.path", spec)))
