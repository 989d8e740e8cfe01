"""Following the Indexed Job: what its Job and Pod objects say, as one state. Pure.

The objects are the API's JSON (camelCase, as `kubectl get -o json` and the client's
`sanitize_for_serialization` give them). `observe` answers: which shard indexes completed and which
failed (the Job's `completedIndexes` / `failedIndexes`, the controller's own bookkeeping, which counts
`backoffLimitPerIndex`), whether the Job is over, whether a pod cannot pull the image (that fails the
run at once: every retry would wait for the same pull), and the progress line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
INDEX = "batch.kubernetes.io/job-completion-index"


def indexes(text: str | None) -> set[int]:
    """`0,2-4` (the Job's completedIndexes/failedIndexes) -> {0, 2, 3, 4}."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if "-" in part:
            low, high = part.split("-", 1)
            out.update(range(int(low), int(high) + 1))
        elif part:
            out.add(int(part))
    return out


@dataclass
class State:
    completed: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)
    running: int = 0
    pending: int = 0
    over: bool = False  # the Job finished (Complete or Failed), or every index is completed or failed
    pull_error: str = ""  # one line: the pod, the image and the kubelet's reason
    condition: str = ""  # the Job's Failed condition's reason and message, when it has one

    def line(self, name: str, count: int, elapsed: float) -> str:
        failed = ", ".join(f"{k + 1}/{count}" for k in sorted(self.failed)) or "none"
        return (f"job {name}: {len(self.completed)}/{count} shards done, {self.running} running, {self.pending} pending, "
                f"failed: {failed} ({elapsed:.0f}s)")


def _pull_error(pod: dict) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    statuses += (pod.get("status") or {}).get("initContainerStatuses") or []
    for status in statuses:
        waiting = (status.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in PULL_FAILURES:
            name = (pod.get("metadata") or {}).get("name", "?")
            message = " ".join(str(waiting.get("message") or "").split())[:240]
            return (f"pod {name} cannot pull {status.get('image', '?')}: {waiting['reason']}"
                    + (f": {message}" if message else ""))
    return ""


def observe(job: dict, pods: list[dict], count: int) -> State:
    """The Job's state from its object and its pods' (pure)."""
    status = job.get("status") or {}
    state = State(completed=indexes(status.get("completedIndexes")), failed=indexes(status.get("failedIndexes")))
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase")
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        state.running += phase == "Running"
        state.pending += phase == "Pending"
        state.pull_error = state.pull_error or _pull_error(pod)
    for cond in status.get("conditions") or []:
        if cond.get("status") != "True":
            continue
        if cond.get("type") in ("Complete", "Failed"):
            state.over = True
        if cond.get("type") in ("Failed", "FailureTarget") and not state.condition:
            state.condition = f"{cond.get('reason', '')}: {cond.get('message', '')}".strip(": ")
    if len(state.completed | state.failed) >= count:
        state.over = True
    return state


def succeeded_pod(pods: list[dict], index: int) -> dict | None:
    """The pod that completed `index` (the last to succeed, when a retry raced)."""
    found = [p for p in pods if (p.get("status") or {}).get("phase") == "Succeeded"
             and ((p.get("metadata") or {}).get("annotations") or {}).get(INDEX) == str(index)]
    found.sort(key=lambda p: (p.get("status") or {}).get("startTime") or "")
    return found[-1] if found else None
