"""The variants (one `Variant` row each, VARIANTS), their scheduler configurations and the workloads,
for the harness. Pure. What each variant is, is said once, in its row's note; `run`, `report`,
`results`, the task's help and docs/bench-perf.md read the rows. bench.e2e's letters are rows of the
same kind (E2E_VARIANTS).

The spec variant runs vanilla's profile (`default-scheduler`, the harness's pods ask for it) plus the
spec's own plugins only: each plugin set and pluginConfig entry of the spec's profiles that names one of
the spec's out-of-tree plugins. Nothing else of the spec (its other profiles, other plugin changes,
global settings, extenders) comes along, so the difference to vanilla is the plugins'. The extender
variant's extender is plain HTTP on 127.0.0.1: the harness runs in one machine, so the mutual TLS of a
deployment is left out.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

from scheduler_build.config import schedulerconfig
from scheduler_build.errors import UserError
from scheduler_build.safeyaml import load_yaml
from scheduler_build.spec import Spec

GATE = "OpportunisticBatching"
LABELLED = "Labelled"  # suffix of the opt-in copy of a test case: SchedulingBasicLabelled
DEFAULT_CASE = "SchedulingBasic"
HARNESS_SCHEDULER = "default-scheduler"  # the schedulerName of upstream's pod templates (none set)
NO_LEADER_ELECTION = {"leaderElect": False}
# How a variant's scheduler configuration is made
DEFAULT = "default"  # upstream's default profile: no configuration file, the harness's own default
SPEC = "spec"  # vanilla's profile plus the spec's own plugins (spec_config)
EXTENDER = "extender"  # the default profile plus an extender entry (extender_config)
# Which compiled scheduler runs it
PLAIN = "plain"  # the spec's build: its patches and plugins compiled in
DEBUGGABLE = "debuggable"  # the same with the recorder patched in and on (build --debuggable)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One bench variant: what it runs and how it is reported."""

    name: str
    config: str  # DEFAULT, SPEC or EXTENDER: how its scheduler configuration is made
    harness: str  # PLAIN or DEBUGGABLE: which compiled scheduler runs it
    plugins: bool  # the spec's out-of-tree plugins are registered and their metrics collected
    gates: tuple[tuple[str, bool], ...]  # feature gates its workload names (where the release has them)
    baseline: str  # the variant its own cost is measured against (ratio_to_base); "" for vanilla's ratio only
    colour: str
    note: str  # what it is, said once: notes, help and docs read it
    default: bool = True  # in the default --variants
    pgo: bool = False  # its scheduler compiled with the profile of --pgo-profile (go build -pgo)
    extender: str = ""  # bench.e2e: the extender's mode (NODE_NAMES, NODE_LIST, TWO_WRITES); "" none

    @property
    def harness_key(self) -> tuple[str, bool]:
        """Variants with the same key run the same compiled binary."""
        return (self.harness, self.pgo)


BATCHING = ((GATE, True),)
VARIANTS: tuple[Variant, ...] = (
    Variant("vanilla", DEFAULT, PLAIN, False, BATCHING, "", "#4c72b0",
            "upstream's default profile, OpportunisticBatching on; the baseline of every ratio"),
    Variant("vanilla-nobatch", DEFAULT, PLAIN, False, ((GATE, False),), "vanilla", "#8172b3",
            "the same with the OpportunisticBatching gate off: vanilla minus it is what batching is worth, so a "
            "variant's gap to vanilla splits into \"batching lost\" and \"own cost\""),
    Variant("spec", SPEC, PLAIN, True, BATCHING, "vanilla", "#55a868",
            "vanilla's profile plus the spec's own plugins only (its other profiles and settings left out)"),
    Variant("debuggable", SPEC, DEBUGGABLE, True, BATCHING, "spec", "#c44e52",
            "spec's configuration run by a harness of its own, compiled with the recorder patch after the spec's "
            "(as `build --debuggable`): its ratio to spec is what recording costs", default=False),
    Variant("extender", EXTENDER, PLAIN, True, BATCHING, "", "#dd8452",
            "default profile plus the spec's reference extender (plain HTTP on 127.0.0.1, started by the harness's "
            "prepare hook)"),
    Variant("spec-pgo", SPEC, PLAIN, True, BATCHING, "spec", "#2d7a3e",
            "spec compiled with profile-guided optimisation (the profile of --pgo-profile, taken in another run): "
            "its ratio to spec is what PGO gains", default=False, pgo=True),
    Variant("vanilla-pgo", DEFAULT, PLAIN, False, BATCHING, "vanilla", "#2b4a7a",
            "vanilla run by the spec-pgo binary: its ratio to vanilla is what PGO gains upstream's profile",
            default=False, pgo=True),
)
BY_NAME = {v.name: v for v in VARIANTS}
BASELINE = "vanilla"  # every ratio_to_vanilla's
DEFAULT_VARIANTS = ",".join(v.name for v in VARIANTS if v.default)

# bench.e2e's variants: its letters, rows of the same kind (its own extender modes)
NODE_NAMES, NODE_LIST, TWO_WRITES = "NodeNames", "NodeList", "NodeNames, OneWrite off"
E2E_VARIANTS: tuple[Variant, ...] = (
    Variant("a", DEFAULT, PLAIN, False, (), "", "#4c72b0", "in-tree only"),
    Variant("b", SPEC, PLAIN, True, (), "a", "#55a868", "example plugin"),
    Variant("c", EXTENDER, PLAIN, False, (), "a", "#dd8452", "extender NodeNames", extender=NODE_NAMES),
    Variant("d", EXTENDER, PLAIN, False, (), "a", "#c44e52", "extender NodeList", extender=NODE_LIST),
    Variant("e", EXTENDER, PLAIN, False, (), "c", "#8172b2", "extender NodeNames, OneWrite off", default=False,
            extender=TWO_WRITES),
    Variant("f", SPEC, DEBUGGABLE, True, (), "b", "#937860", "example plugin, debuggable", default=False),
)

E2E_BY_NAME = {v.name: v for v in E2E_VARIANTS}
E2E_DEFAULT = "".join(v.name for v in E2E_VARIANTS if v.default)


def help_text() -> str:
    """The --variants help: every row's name, the default ones and the baselines."""
    others = ", ".join(f"{v.name}'s {v.baseline}" for v in VARIANTS if v.baseline and v.baseline != BASELINE)
    return (f"which of {','.join(v.name for v in VARIANTS)} (default {DEFAULT_VARIANTS}; {BASELINE} is the "
            f"ratios' baseline, {others}; *-pgo need --pgo-profile)")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?$")


@dataclasses.dataclass(frozen=True)
class Workload:
    case: str  # upstream test case, e.g. SchedulingBasic
    name: str  # its workload, e.g. 500Nodes

    @property
    def label(self) -> str:
        return f"{self.case}/{self.name}"

    def bench_pattern(self) -> str:
        """-test.bench: one workload exactly (each path element of the pattern is its own regexp)."""
        return f"^BenchmarkPerfScheduling$/^{re.escape(self.case)}$/^{re.escape(self.name)}$"


def parse_workloads(text: str) -> list[Workload]:
    """`500Nodes,5000Nodes_10000Pods` or `Case/Workload` entries; SchedulingBasic when no case is named."""
    found = []
    for part in [p.strip() for p in str(text).split(",") if p.strip()]:
        if not _NAME.match(part):
            raise UserError(f"--workloads {part!r} is not a workload name", "e.g. 500Nodes or SchedulingBasic/5000Nodes_10000Pods")
        case, _, name = part.rpartition("/")
        found.append(Workload(case or DEFAULT_CASE, name))
    if not found:
        raise UserError("--workloads is empty", "e.g. --workloads 500Nodes,5000Nodes_10000Pods")
    return found


def parse_variants(text: str) -> list[str]:
    chosen = [v.strip() for v in str(text).split(",") if v.strip()]
    unknown = [v for v in chosen if v not in BY_NAME]
    if unknown or not chosen:
        raise UserError(f"--variants {text!r}: unknown {', '.join(unknown) or 'empty'}",
                        f"use some of {','.join(BY_NAME)}")
    return [v.name for v in VARIANTS if v.name in chosen]  # vanilla first: the ratios' baseline


def check_pgo(chosen: list[str], profile: object | None) -> None:
    """A *-pgo variant needs a profile, and a profile needs a *-pgo variant (decided before any compile)."""
    wanting = [v for v in chosen if BY_NAME[v].pgo]
    if wanting and profile is None:
        raise UserError(f"--variants {','.join(wanting)}: compiled with a profile, and no --pgo-profile was given",
                        "pass --pgo-profile FILE, a CPU profile from another run (docs/bench-perf.md)")
    if profile is not None and not wanting:
        raise UserError("--pgo-profile is given but no *-pgo variant is chosen", "add --variants spec,spec-pgo")


def check_known(workloads: list[Workload], config_text: str, where: str,
                labelled_ok: bool = False) -> dict[str, float | None]:
    """Every workload exists in upstream's file, or (`labelled_ok`: the spec labels pods) is the opt-in
    copy <Case>Labelled of one that does; returns its threshold (pods/s) or None, by label."""
    cases = {c.get("name"): c for c in (load_yaml(config_text) or []) if isinstance(c, dict)}
    thresholds: dict[str, float | None] = {}
    for w in workloads:
        copy = labelled_ok and w.case.endswith(LABELLED) and w.case not in cases
        case = cases.get(w.case[:-len(LABELLED)] if copy else w.case)
        names = {x.get("name"): x for x in (case or {}).get("workloads", []) if isinstance(x, dict)}
        if w.name not in names:
            known = ", ".join(sorted(n for n in names if n)) if case else ", ".join(sorted(n for n in cases if n))
            raise UserError(f"--workloads {w.label}: not in {where}", f"known {'workloads of ' + w.case if case else 'test cases'}: {known}")
        value = None if copy else names[w.name].get("threshold")
        thresholds[w.label] = float(value) if value is not None else None
    return thresholds


def spec_config(spec: Spec) -> dict:
    """Vanilla's profile plus the spec's own plugins (see the module docstring)."""
    ours = set(spec.plugin_names)
    plugins: dict[str, dict] = {}
    args: dict[str, dict] = {}
    for profile in copy.deepcopy(spec.profiles):
        for point, entries in (profile.get("plugins") or {}).items():
            for kind in ("enabled", "disabled"):
                for entry in (entries or {}).get(kind) or []:
                    if entry.get("name") in ours:
                        plugins.setdefault(point, {}).setdefault(kind, []).append(entry)
        for entry in profile.get("pluginConfig") or []:
            if entry.get("name") in ours:
                args.setdefault(entry["name"], entry)
    profile = {"schedulerName": HARNESS_SCHEDULER}
    if plugins:
        profile["plugins"] = plugins
    if args:
        profile["pluginConfig"] = list(args.values())
    return schedulerconfig.scheduler_configuration(profiles=[profile], leader_election=dict(NO_LEADER_ELECTION))


def gated_cases(config_text: str, w: Workload, on: bool | None, spec_gates: dict[str, bool] | None = None) -> list:
    """The workload file's test cases with w's workload naming the spec's feature gates (`featureGates`, every
    variant: vanilla too, so a variant's difference stays its plugins'), then the batching gate (on or off;
    None: left as the spec or upstream has it)."""
    gates = dict(spec_gates or {})
    if on is not None:
        gates[GATE] = on
    cases = load_yaml(config_text) or []
    for case in cases:
        if isinstance(case, dict) and case.get("name") == w.case:
            for workload in case.get("workloads") or []:
                if isinstance(workload, dict) and workload.get("name") == w.name:
                    workload.setdefault("featureGates", {}).update(gates)
    return cases


def extender_config(spec: Spec, url: str) -> dict:
    """Upstream's default profile plus the spec's reference-extender entry at `url` (plain HTTP)."""
    if not spec.reference_extender.enabled:
        raise UserError(f"{spec.path}: referenceExtender.enabled is false, so there is no extender to measure",
                        "enable referenceExtender in the spec, or leave out the extender variant (--variants vanilla,spec)")
    entry = schedulerconfig.reference_extender_entry(spec)
    entry["urlPrefix"] = url
    entry["enableHTTPS"] = False
    entry.pop("tlsConfig", None)
    return schedulerconfig.scheduler_configuration(profiles=[{"schedulerName": HARNESS_SCHEDULER}],
                                                   leader_election=dict(NO_LEADER_ELECTION), extenders=[entry])


def misc_config(module_dir: Path) -> Path:
    return Path(module_dir) / "test/integration/scheduler_perf/misc/performance-config.yaml"


def pod_labels(spec: Spec, recorded: bool = False) -> dict[str, str]:
    """The labels that make the spec's plugins and the reference extender act on a pod.

    A plugin's `podLabel` argument (the example's convention: UnderlayIPLimit counts only pods
    carrying it) and the reference extender's underlay-IP label; empty when no plugin takes one.
    recorded (the debuggable variant runs): also the spec's `debuggable.podLabel`, the recorder's opt-in."""
    labels = {}
    if recorded and spec.debuggable.pod_label:
        labels[spec.debuggable.pod_label] = "true"
    for profile in spec.profiles:
        for entry in profile.get("pluginConfig") or []:
            label = (entry.get("args") or {}).get("podLabel")
            if isinstance(label, str) and label:
                labels[label] = "true"
    if labels and spec.reference_extender.enabled:
        from scheduler_build.extender.policy import UnderlayIPPolicy  # (bench.commands' help reads this module)

        labels[UnderlayIPPolicy.POD_LABEL] = "true"
    return labels


def labelled(w: Workload) -> Workload:
    return Workload(w.case + LABELLED, w.name)


def labelled_files(upstream_text: str, pod_text: str, case: str, labels: dict[str, str], pod_path: Path) -> tuple[list, dict]:
    """(test cases, pod) for the opt-in copy of upstream's `case`: the same workloads and ops,
    named <case>Labelled, with a default pod template that is upstream's plus `labels`."""
    found = [c for c in (load_yaml(upstream_text) or []) if isinstance(c, dict) and c.get("name") == case]
    if not found:
        raise UserError(f"no test case {case} in upstream's performance-config.yaml", "name an upstream test case")
    copy_case = copy.deepcopy(found[0])
    copy_case["name"] = case + LABELLED
    copy_case["defaultPodTemplatePath"] = str(pod_path)
    pod = load_yaml(pod_text)
    pod.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return [copy_case], pod
