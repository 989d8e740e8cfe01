"""The spec's `featureGates`, judged by the compiled kube-scheduler itself, and the gates a release can change.

The binary sets `--feature-gates` while parsing its flags, before anything else (component-base
featuregate): it refuses a gate its release does not know or has locked, every one at once, and says
on stderr when a gate is GA or deprecated:

    unrecognized feature gate: SchedulerQueueingHints
    cannot set feature gate SchedulerQueueingHints to false, feature is locked to true
    "Warning: setting GA feature gate. It will be removed in a future release." featureGate="X" value=true

So no list of gates is kept here: a gate a patch adds, or one a release removes, is judged by the code
that was compiled (`config.validate` and `build` run it). Without a binary (`--fields-only`) the release's
own source (resolve.vocabulary, pkg/features/kube_features.go) stands in. Parsing is pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.errors import UserError

_UNKNOWN = re.compile(r"unrecognized feature gate: (\w+)")
_LOCKED = re.compile(r"cannot set feature gate (\w+) to (\w+), feature is (locked to \w+|PreAlpha[^\"\]\\]*)")
_WARNING = re.compile(r'"Warning: (setting|overriding default of) (GA|deprecated) feature gate\. It will be removed '
                      r'in a future release\."\s+featureGate="(\w+)"')


@dataclass(frozen=True)
class GateVerdict:
    """What the binary (or, without one, the release's source) says about one gate of the spec."""

    gate: str
    value: bool
    refused: str = ""  # its own words when it refuses the gate
    warning: str = ""  # `GA` or `deprecated` when it accepts the gate with a warning

    def line(self, version: str) -> str:
        """One line naming the gate, the release and the fix."""
        minor = _minor(version)
        setting = f"featureGates.{self.gate}: {'true' if self.value else 'false'}"
        if "unrecognized" in self.refused:
            return (f"{setting}: Kubernetes {minor} ({version}) has no feature gate {self.gate}, its kube-scheduler "
                    f"refuses to start ({self.refused}); remove featureGates.{self.gate} from the spec (the gate was "
                    f"removed or renamed in {minor}; `inv config.validate --list-gates` lists {minor}'s gates)")
        if self.refused:
            return (f"{setting}: Kubernetes {minor} ({version}) refuses it ({self.refused}); remove "
                    f"featureGates.{self.gate} from the spec ({minor} runs the feature at its fixed value)")
        if self.warning:
            return (f"warning: {setting}: the gate is {self.warning} in Kubernetes {minor} ({version}) and will be "
                    f"removed in a future release; remove featureGates.{self.gate} from the spec before then")
        return f"{setting}: accepted by Kubernetes {minor} ({version})"


def _minor(version: str) -> str:
    parts = version.lstrip("v").split(".")
    return ".".join(parts[:2])


def judge_output(output: str, gates: dict[str, bool]) -> list[GateVerdict]:
    """One verdict per gate of the spec, from the binary's output (sorted by gate)."""
    refused: dict[str, str] = {}
    for match in _UNKNOWN.finditer(output):
        refused.setdefault(match.group(1), match.group(0))
    for match in _LOCKED.finditer(output):
        refused.setdefault(match.group(1), match.group(0))
    warned = {match.group(3): match.group(2) for match in _WARNING.finditer(output)}
    return [GateVerdict(name, on, refused=refused.get(name, ""), warning="" if name in refused else warned.get(name, ""))
            for name, on in sorted(gates.items())]


def judge_source(specs: dict[str, dict], gates: dict[str, bool], staging: frozenset[str] = frozenset()) -> list[GateVerdict]:
    """The same verdicts from the release's source (vocabulary.feature_gate_specs), for `--fields-only`:
    the binary's own words, as component-base would say them. `staging`: the gates the staging modules
    register (vocabulary.staging_gate_names), accepted without a stage (the binary tells the rest)."""
    verdicts = []
    for name, on in sorted(gates.items()):
        known = specs.get(name)
        if known is None and name not in ("AllAlpha", "AllBeta") and name not in staging:
            verdicts.append(GateVerdict(name, on, refused=f"unrecognized feature gate: {name}"))
        elif known and known["locked"] and known["default"] != on:
            verdicts.append(GateVerdict(name, on, refused=(
                f"cannot set feature gate {name} to {str(on).lower()}, feature is locked to {str(known['default']).lower()}")))
        elif known and known["stage"] in ("GA", "Deprecated"):
            verdicts.append(GateVerdict(name, on, warning=known["stage"] if known["stage"] == "GA" else "deprecated"))
        else:
            verdicts.append(GateVerdict(name, on))
    return verdicts


def check(verdicts: list[GateVerdict], version: str, where: str) -> list[str]:
    """Raise for the first refused gate (one line: the gate, the release, the fix); the warnings' lines."""
    for verdict in verdicts:
        if verdict.refused:
            more = sum(1 for v in verdicts if v.refused) - 1
            line = verdict.line(version)
            message, _, hint = line.partition("; ")
            raise UserError(f"{where}: {message}" + (f" (and {more} more gate(s) refused)" if more > 0 else ""), hint)
    return [verdict.line(version) for verdict in verdicts if verdict.warning]


def changeable(specs: dict[str, dict]) -> list[str]:
    """`--list-gates`: one line per gate that can still be set (not locked), with its stage and default."""
    rows = [(name, gate["stage"], "true" if gate["default"] else "false", gate.get("since", ""))
            for name, gate in sorted(specs.items()) if not gate["locked"]]
    width = max((len(name) for name, *_ in rows), default=4)
    return [f"{name:<{width}}  {(stage + ' since ' + since).strip():<20}  default={default}"
            for name, stage, default, since in rows]
