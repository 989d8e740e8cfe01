"""The `featureGates` section: gate name -> true/false, rendered into every scheduler's `--feature-gates`.

Only the form is checked here (loading a spec reads no Kubernetes source): whether the target release knows
the gate, has locked it, or warns that it is GA or deprecated is said by the built binary itself
(config.feature_gates, run by `config.validate` and `build`)."""

from __future__ import annotations

import re
from typing import Any

from scheduler_build.spec.fields import Fields, show, type_name

# A Go feature name as component-base accepts it in --feature-gates (AllAlpha and AllBeta included).
GATE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def check_feature_gates(f: Fields, raw: Any) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        f.err("featureGates", f"must be a mapping of feature gate name to true or false "
                              f"(e.g. featureGates: {{GenericWorkload: true}}), got {type_name(raw)} {show(raw)}")
        return {}
    gates: dict[str, bool] = {}
    for name, value in raw.items():
        path = f"featureGates.{name}"
        if not isinstance(name, str) or not GATE_NAME.match(name):
            f.err(path, f"must be a feature gate name (letters and digits, such as GenericWorkload), got {show(name)}")
            continue
        on = f.boolean(path, value)
        if on is not None:
            gates[name] = on
    return dict(sorted(gates.items()))
