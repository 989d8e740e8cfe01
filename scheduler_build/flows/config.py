"""`config.validate`'s conductor: the spec's fields against its Kubernetes release, then the real kube-scheduler
accepting the rendered configuration, then the batching verdict per profile. Inputs decided by the task
(inputs.config.validate_inputs); it reads no setting."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from scheduler_build.atomic import write_atomic
from scheduler_build import spec as spec_mod
from scheduler_build.config import batching, feature_gates, target
from scheduler_build.config import render as manifests
from scheduler_build.config import validate as config_validate
from scheduler_build.errors import UserError
from scheduler_build.inputs.config import ValidateInputs
from scheduler_build.progress import log, phase
from scheduler_build.resolve import vocabulary


@dataclass(frozen=True)
class Verdict:
    kubernetes_version: str
    binary: str  # empty: --fields-only, no binary ran
    batching: tuple[batching.ProfileBatching, ...] = field(default=())  # one per profile, from the binary's start-up log
    gate_warnings: tuple[str, ...] = ()  # the spec's featureGates the release accepts with a warning (GA, deprecated)

    def to_dict(self) -> dict:
        data: dict = {"kubernetes_version": self.kubernetes_version, "binary": self.binary,
                      "feature_gate_warnings": list(self.gate_warnings)}
        if self.binary or self.batching:
            data["batching"] = [v.to_dict() for v in self.batching]
        return data


def validate(inputs: ValidateInputs) -> Verdict:
    """Check; a refusal is a UserError naming the binary, the spec and the reason."""
    loaded = inputs.spec
    version = target.kubernetes_release(loaded, inputs.k8s_version, inputs.cache_dir)
    config_validate.check_fields(loaded, version, inputs.cache_dir)
    config = manifests.config_text(loaded)
    if inputs.fields_only:  # no binary to ask: the release's own source judges the gates
        specs, staging = {}, frozenset()
        if loaded.feature_gates:
            specs = vocabulary.feature_gate_specs(version, inputs.cache_dir)
            staging = frozenset(vocabulary.staging_gate_names(version, inputs.cache_dir))
        warned = feature_gates.check(feature_gates.judge_source(specs, loaded.feature_gates, staging), version,
                                     inputs.spec_path)
        if not inputs.require_batching:
            return Verdict(version, "", gate_warnings=tuple(warned))
        # What the configuration alone decides (extenders, a release without the gate) is judged here;
        # whether each plugin implements SignPod only the binary can tell.
        gate = vocabulary.feature_gates(version, inputs.cache_dir).get(batching.GATE)
        decided = batching.judge_static(yaml.safe_load(config) or {}, gate)
        if decided is None:
            log("note: --fields-only with --require-batching judged the extenders and the release only; whether each "
                "plugin implements SignPod only the binary can tell (validate without --fields-only)")
        return Verdict(version, "", tuple(decided or ()), gate_warnings=tuple(warned))
    binary_path = inputs.binary or config_validate.default_binary(loaded, version, inputs.dist_dir)
    if not binary_path.is_file():
        raise UserError(f"no kube-scheduler at {binary_path}",
                        f"run `inv build --spec {inputs.spec_path}` first, pass --binary PATH, or use --fields-only")
    with phase("binary", f"{binary_path} --config ... --write-config-to ... (no network)"):
        image = inputs.runner_image or config_validate.builder_image()
        verdict = config_validate.validate_with_binary(binary_path, config, image, flags=spec_mod.scheduler_flags(loaded))
    warned = feature_gates.check(feature_gates.judge_output(verdict.output, loaded.feature_gates), version,
                                 f"{inputs.spec_path} (judged by {binary_path})")
    if not verdict.ok:
        for line in verdict.output.splitlines()[-15:]:
            log(f"    | {line}")
        raise UserError(f"{binary_path} refused the configuration rendered from {inputs.spec_path}: "
                        f"{config_validate.refusal_reason(verdict.output)}",
                        config_validate.refusal_hint(verdict.output, loaded))
    if inputs.write_config_to:
        write_atomic(inputs.write_config_to, verdict.written)
    gate = vocabulary.feature_gates(version, inputs.cache_dir).get(batching.GATE)
    return Verdict(version, str(binary_path), tuple(batching.judge(verdict.output, yaml.safe_load(config) or {}, gate)),
                   tuple(warned))


def changeable_gates(inputs: ValidateInputs) -> tuple[str, list[str]]:
    """`config.validate --list-gates`: the release, and its gates that can still be set, from its own source."""
    version = target.kubernetes_release(inputs.spec, inputs.k8s_version, inputs.cache_dir)
    with phase("gates", f"{vocabulary.FEATURES_GO} of k8s.io/kubernetes {version}"):
        return version, feature_gates.changeable(vocabulary.feature_gate_specs(version, inputs.cache_dir))
