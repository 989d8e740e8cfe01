"""kube-score on the rendered manifests, and the deliberate choices it reports (shipped, with reasons).

`EXCEPTIONS` is the one list of kube-score findings the rendered objects keep on
purpose; docs/gitops-helm.md prints each with its reason (a test checks that it
does). `kube_score` runs the pinned kube-score (built once from the Go module
proxy) and returns its CRITICAL findings; `unexcused` drops those on the list.
A finding the list does not name is a defect of the manifests.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError

KUBE_SCORE = "github.com/zegl/kube-score/cmd/kube-score"
KUBE_SCORE_VERSION = "v1.20.0"
CRITICAL = 1  # kube-score's grade for a critical finding


@dataclass(frozen=True)
class Deliberate:
    check: str  # kube-score's check id
    summary: str  # the finding's summary, as kube-score words it
    reason: str


EXCEPTIONS = (
    Deliberate("container-resources", "CPU limit is not set",
               "A CPU limit throttles the scheduler (CFS quota) in the middle of a scheduling cycle and the "
               "extender while the scheduler waits on its answer; the CPU request already guarantees their "
               "share. Set deployment.resources.limits.cpu if your policy demands one."),
    Deliberate("container-image-pull-policy", "ImagePullPolicy is not set to Always",
               "Image tags are immutable (<kubernetes-version>-<version>, or a digest): IfNotPresent runs the "
               "same bytes and lets a pod restart while the registry is unreachable. image.pullPolicy: Always "
               "in the spec renders Always."),
    Deliberate("container-ephemeral-storage-request-and-limit", "Ephemeral Storage limit is not set",
               "Both pods write only their logs and an empty /tmp; a limit evicts the pod when its log grows "
               "past it. Set it in deployment.resources if your policy requires one."),
    Deliberate("container-ephemeral-storage-request-and-limit", "Ephemeral Storage request is not set",
               "A request makes the pods unschedulable on nodes that report no ephemeral-storage capacity; "
               "their use is a few MiB of logs."),
)


@dataclass(frozen=True)
class Finding:
    obj: str  # Kind/group/version/namespace/name, as kube-score names it
    check: str
    path: str  # the container, or ""
    summary: str

    def __str__(self) -> str:
        return f"{self.obj}: {self.check}: {(self.path + ': ') if self.path else ''}{self.summary}"


def binary(cache_dir: Path) -> Path:
    """The pinned kube-score, built from the Go module proxy once."""
    return gotool.installed_tool(cache_dir, "kube-score", KUBE_SCORE, KUBE_SCORE_VERSION)


def kube_score(files: Sequence[Path], cache_dir: Path) -> list[Finding]:
    """Every CRITICAL finding of `kube-score score` over the manifest files."""
    proc = subprocess.run([str(binary(cache_dir)), "score", "--output-format", "json", *map(str, files)],
                          capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise UserError(f"kube-score gave no report (exit {proc.returncode}): "
                        f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}") from None
    return [Finding(obj["object_name"], check["check"]["id"], comment.get("path", ""), comment.get("summary", ""))
            for obj in report for check in obj.get("checks") or []
            if check.get("grade") == CRITICAL and not check.get("skipped")
            for comment in check.get("comments") or [{}]]


def unexcused(findings: Sequence[Finding]) -> list[Finding]:
    """The findings no entry of EXCEPTIONS names (same check, same summary)."""
    excused = {(e.check, e.summary) for e in EXCEPTIONS}
    return [f for f in findings if (f.check, f.summary) not in excused]
