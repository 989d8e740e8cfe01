"""The build spec: one YAML file that describes a custom scheduler end to end.

`load(path)` parses and validates the whole file and returns a `Spec`; on bad
input it raises `SpecError` listing *every* problem at once, each naming the
field path (``profiles[1].plugins.score.enabled[0].weight``) and the bad value,
so a release engineer fixes the file in one pass instead of one error per run.

The package, one concern a module:
- `model`: the dataclasses (`Spec`, ...) and the names derived from them;
- `load`: YAML with unique keys, then `checks_top.check_spec`;
- `fields`: the field primitives (string, integer range, enum, duration, ...);
- `checks_*`: one section checker per part of the spec (top, sources, image,
  profiles, extenders, runtime, deployment, reference_extender, feature_gates), each taking the
  shared `Fields` and the section's raw value, composing the primitives;
- `formats`: the patterns; `errors`: `SpecError`;
- `plugin_names`: the one check that needs the target Kubernetes source
  (`check_plugin_names`, called by `inv config.validate`).
"""

from scheduler_build.spec.errors import SPEC_HINT, SpecError
from scheduler_build.spec.formats import DURATION, EXTENSION_POINT, PULL_POLICIES
from scheduler_build.spec.load import STDIN_NAME, is_stdin, load, loads, stdin_text
from scheduler_build.spec.model import (
    DEFAULT_NAMESPACE,
    Deployment,
    Image,
    PluginSource,
    Registration,
    ReferenceExtender,
    Spec,
    default_image_tag,
    default_repository,
    feature_gates_flag,
    reference_extender_name,
    reference_extender_service_host,
    reference_extender_url,
    scheduler_flags,
)
from scheduler_build.spec.plugin_names import check_plugin_names

__all__ = [
    "DEFAULT_NAMESPACE", "DURATION", "EXTENSION_POINT", "PULL_POLICIES", "SPEC_HINT",
    "Deployment", "Image", "PluginSource", "ReferenceExtender", "Registration", "Spec", "SpecError",
    "check_plugin_names", "default_image_tag", "default_repository", "STDIN_NAME", "is_stdin", "load", "loads", "stdin_text", "reference_extender_name", "reference_extender_service_host",
    "reference_extender_url", "feature_gates_flag", "scheduler_flags",
]
