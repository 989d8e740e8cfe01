"""Every key of the rendered configuration exists in the target release's kubescheduler.config.k8s.io/v1.

The field set comes from that release's own types.go (resolve.vocabulary), so a
field a newer minor adds (1.37's `plugins.podGroupPostFilter`) is accepted for
that minor and refused for an older target, naming the minor that introduced it.
Types defined outside config/v1 (leader election, client connection, durations,
plugin args) are not walked: their own packages check them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from scheduler_build.config import schedulerconfig
from scheduler_build.resolve.vocabulary import ROOT, ConfigAPI
from scheduler_build.spec import Spec, SpecError
from scheduler_build.spec.fields import suggest

# keys (root first) -> the first newer minor that has them, or None
Introduced = Callable[[tuple[str, ...]], "str | None"]


def unknown_keys(config: dict, api: ConfigAPI) -> Iterator[tuple[str, tuple[str, ...], str]]:
    """(dotted path, JSON keys root first, struct) for each key the API does not have. Pure."""
    yield from _walk(config, ROOT, "", (), api)


def _walk(value: Any, struct: str, path: str, keys: tuple[str, ...], api: ConfigAPI) -> Iterator:
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, struct, f"{path}[{index}]", keys, api)
        return
    if not isinstance(value, dict):
        return
    fields = api.fields_of(struct)
    for key, item in value.items():
        if struct == ROOT and key in ("apiVersion", "kind"):
            continue
        where = f"{path}.{key}" if path else key
        go_type = fields.get(key)
        if go_type is None:
            yield where, (*keys, key), struct
            continue
        inner = api.struct_of(go_type)
        if inner:
            yield from _walk(item, inner, where, (*keys, key), api)


def spec_field(spec: Spec, config_path: str) -> str:
    """The spec field a configuration path came from: the reference extender is appended after the spec's own."""
    if config_path.startswith("extenders["):
        index = int(config_path[len("extenders["):].split("]", 1)[0])
        if index >= len(spec.extenders):
            rest = config_path.split("]", 1)[1]
            return "referenceExtender" + rest
    return config_path


def check_api_fields(spec: Spec, api: ConfigAPI, introduced: Introduced) -> None:
    """Raise SpecError naming each field of the spec's configuration that `api`'s release lacks."""
    errors = []
    for where, keys, struct in unknown_keys(schedulerconfig.for_spec(spec), api):
        key = keys[-1]
        minor = introduced(keys)
        if minor:
            what = (f"{key!r} is not in {struct} of {schedulerconfig.CONFIG_API} in Kubernetes {api.version}: "
                    f"it was introduced in {minor}; target {minor} or newer (kubernetes.version) or drop it")
        else:
            what = (f"{key!r} is not in {struct} of {schedulerconfig.CONFIG_API} in Kubernetes {api.version} "
                    f"nor in a newer minor{suggest(key, set(api.fields_of(struct)))}")
        errors.append((spec_field(spec, where), what))
    if errors:
        raise SpecError(str(spec.path), errors)
