"""featureGates judged by the real kube-scheduler (the suite's shared built_scheduler, the default minor, 1.36):
the binary's own words for a GA gate set to its value (a warning) and to the other (refused, locked), and for a
gate no release has (refused, unrecognized). Three runs of its validation mode, ~15 s each here; no build of
its own. (v1.37.2's refusal of SchedulerQueueingHints has no shared 1.37 build to run on: the unit tests read
its words, and `--fields-only` reads v1.37.2's own source.)"""

from __future__ import annotations

import pytest
import yaml

from scheduler_build import spec as spec_mod
from scheduler_build.config import feature_gates
from scheduler_build.config import validate as config_validate
from scheduler_build.errors import UserError
from scheduler_build.resolve import vocabulary
from scheduler_build import settings

CONFIG = yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "leaderElection": {"leaderElect": False}})


def _judged(built, gates: dict[str, bool]) -> tuple[config_validate.BinaryVerdict, list]:
    verdict = config_validate.validate_with_binary(built.binary, CONFIG, built.info.builder.image,
                                                   flags=spec_mod.feature_gates_flag(gates))
    return verdict, feature_gates.judge_output(verdict.output, gates)


def test_a_ga_gate_warns_at_its_value_and_is_refused_at_the_other(built_scheduler):
    version = built_scheduler.info.kubernetes.version
    locked = [name for name, gate in vocabulary.feature_gate_specs(version, settings.cache_dir()).items()
              if gate["locked"] and gate["stage"] == "GA" and gate["default"]]
    assert locked, f"{version} has no GA gate locked to true to try"
    gate = "SchedulerQueueingHints" if "SchedulerQueueingHints" in locked else locked[0]
    verdict, (ga,) = _judged(built_scheduler, {gate: True})
    assert verdict.ok and ga.warning == "GA" and not ga.refused, verdict.output[-2000:]
    verdict, (off,) = _judged(built_scheduler, {gate: False})
    assert not verdict.ok and "feature is locked to true" in off.refused, verdict.output[-2000:]
    with pytest.raises(UserError, match=rf"featureGates\.{gate}: false: Kubernetes 1\.\d+ .*locked to true"):
        feature_gates.check([off], version, "spec.yaml")


def test_a_gate_the_release_does_not_know_is_refused_by_the_binary(built_scheduler):
    verdict, (unknown,) = _judged(built_scheduler, {"NoSuchGateAnywhere": True})
    assert not verdict.ok and unknown.refused == "unrecognized feature gate: NoSuchGateAnywhere", verdict.output[-2000:]
