"""Whether each profile keeps opportunistic batching (KEP-5598), as the compiled scheduler itself says.

Since 1.35 the framework reuses one pod's Filter and Score results for the next pod with the same
signature, per profile, only when every enabled PreFilter, Filter, PreScore and Score plugin
implements SignPlugin and no extender is configured. It says so once, while building the profiles:

    "Disabling signatures for profile because it has extenders configured." profile="p"
    "Disabling signatures for profile because plugins do not support it." profile="p" plugins=["A","B"]

The binary builds the profiles in its validation mode too (config.validate), so its own output
is the verdict: no list of plugin names is kept here, and a third-party plugin is judged by the
code that was compiled. Parsing is pure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

GATE = "OpportunisticBatching"
_LINE = re.compile(r'"Disabling signatures for profile because ([^"]*)\."(.*)$')
_PROFILE = re.compile(r'\bprofile="((?:[^"\\]|\\.)*)"')
_PLUGINS = re.compile(r"\bplugins=(\[[^\]]*\])")


@dataclass(frozen=True)
class ProfileBatching:
    profile: str
    extenders: tuple[str, ...] = ()  # the configured extenders' urlPrefix, when they turned batching off
    unsigned: tuple[str, ...] = ()  # enabled PreFilter/Filter/PreScore/Score plugins without SignPod
    unavailable: str = ""  # why this release cannot batch at all (no gate, gate off by default)

    @property
    def on(self) -> bool:
        return not (self.extenders or self.unsigned or self.unavailable)

    def why(self) -> str:
        reasons = [self.unavailable] if self.unavailable else []
        if self.unsigned:
            reasons.append("plugins without SignPod: " + ", ".join(self.unsigned))
        if self.extenders:
            reasons.append("extenders configured: " + ", ".join(self.extenders))
        return "; ".join(reasons)

    def line(self) -> str:
        return f"batching: profile {self.profile}: " + ("on" if self.on else f"off ({self.why()})")

    def to_dict(self) -> dict:
        return {"profile": self.profile, "on": self.on, "unsigned_plugins": list(self.unsigned),
                "extenders": list(self.extenders), "unavailable": self.unavailable}


@dataclass
class _Said:
    extenders: bool = False
    unsigned: list[str] = field(default_factory=list)


def parse_output(output: str) -> dict[str, _Said]:
    """profile -> what the binary said turned its batching off (pure)."""
    said: dict[str, _Said] = {}
    for line in output.splitlines():
        match = _LINE.search(line)
        profile = _PROFILE.search(match.group(2)) if match else None
        if not match or not profile:
            continue
        entry = said.setdefault(profile.group(1), _Said())
        if "extenders" in match.group(1):
            entry.extenders = True
        plugins = _PLUGINS.search(match.group(2))
        if plugins:
            try:
                names = json.loads(plugins.group(1))
            except ValueError:  # klog quotes each name as a Go string: JSON-compatible; keep going if not
                names = re.findall(r'"([^"]+)"', plugins.group(1))
            entry.unsigned.extend(n for n in names if n not in entry.unsigned)
    return said


def judge_static(config: dict, gate_stage: str | None) -> list[ProfileBatching] | None:
    """The verdicts the configuration alone decides, whatever the binary: a release without the gate (or
    with it alpha), or extenders configured (they apply to every profile, and the framework turns
    batching off for a profile with extenders before it looks at plugins). None: only the binary can tell."""
    if gate_stage is None or gate_stage.startswith("Alpha") or not config.get("extenders"):
        return judge("", config, gate_stage) if gate_stage is None or gate_stage.startswith("Alpha") else None
    urls = tuple(str((e or {}).get("urlPrefix", "?")) for e in config.get("extenders") or [])
    return [ProfileBatching(str((p or {}).get("schedulerName") or "default-scheduler"), extenders=urls)
            for p in config.get("profiles") or [{}]]


def judge(output: str, config: dict, gate_stage: str | None) -> list[ProfileBatching]:
    """One verdict per profile of the configuration, from the binary's output.

    gate_stage: the OpportunisticBatching gate's stage in the target release (None: no such gate)."""
    profiles = [str((p or {}).get("schedulerName") or "default-scheduler") for p in config.get("profiles") or [{}]]
    if gate_stage is None:
        return [ProfileBatching(p, unavailable="this Kubernetes release has no opportunistic batching")
                for p in profiles]
    if gate_stage.startswith("Alpha"):
        return [ProfileBatching(p, unavailable=f"the {GATE} gate is alpha, off by default")
                for p in profiles]
    urls = tuple(str((e or {}).get("urlPrefix", "?")) for e in config.get("extenders") or [])
    said = parse_output(output)
    verdicts = []
    for profile in profiles:
        entry = said.get(profile, _Said())
        verdicts.append(ProfileBatching(profile, extenders=(urls or ("(unnamed)",)) if entry.extenders else (),
                                        unsigned=tuple(sorted(entry.unsigned))))
    return verdicts
