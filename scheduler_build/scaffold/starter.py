"""`init`: a commented starter build spec (and, with a plugin, the scaffolded module beside it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scheduler_build import atomic, owned
from scheduler_build.errors import UserError
from scheduler_build.templating import render

TEMPLATE = "scaffold/starter-spec.yaml.j2"


@dataclass(frozen=True)
class PluginRef:
    name: str
    path: str  # relative to the spec, e.g. ./plugins/my-plugin
    package: str  # Go import path of the plugin package


def spec_text(name: str, k8s_minor: str, plugin: PluginRef | None, spec_file: str) -> str:
    return render(TEMPLATE, name=name, k8s_minor=k8s_minor, plugin=plugin, spec_file=spec_file)


def check_target(directory: Path, spec_file: str, force: bool) -> Path:
    """DIR/<spec_file> (the name spec.path's default finds), refused when it exists (unless force) or DIR is not a
    directory."""
    if directory.exists() and not directory.is_dir():
        raise UserError(f"init {directory}: not a directory", "name a new or existing directory")
    target = directory / spec_file
    owned.check_writable(target, "init")  # before the plugin's scaffold and its `go mod tidy`
    if target.exists() and not force:
        raise UserError(f"init: {target} exists; nothing written", "choose another DIR, or --force to replace it")
    return target


def write(target: Path, text: str) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomic(target, text)
    return target
