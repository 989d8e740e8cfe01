"""init: a commented starter spec in DIR (and a plugin module beside it), then the next three commands."""

import re
from pathlib import Path

from invoke import task

from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError, for_program
from scheduler_build.progress import log, phase
from scheduler_build.scaffold import generate, starter
from scheduler_build.commands._common import emit, flag_help, option, user_errors


@task(auto_shortflags=False, help={
    "dir": "where to write scheduler.yaml (default: the current directory; also the first word after init)",
    "name": "the scheduler's name (default: my-scheduler)",
    "plugin": "also scaffold a plugin module of this name (e.g. NodeLimit) under DIR/plugins/ and enable it",
    "module": "the plugin's Go module path (default: example.com/<name>/<plugin in kebab case>)",
    "k8s-version": flag_help("k8s.version", before="the version the spec targets; "),
    "tidy": "run `go mod tidy` in the plugin module (the default); --no-tidy skips it (offline)",
    "force": "replace an existing DIR/scheduler.yaml",
})
@user_errors
def init(c, dir=".", name="my-scheduler", plugin="", module="", k8s_version=None, tidy=True, force=False):
    """Write a commented starter build spec (optionally with a plugin module) and print the next commands."""
    directory = Path(dir)
    target = starter.check_target(directory, force)
    replacing = target.exists()
    minor = option(c, "k8s.version", k8s_version)
    _check_spec_name(name, minor, target)
    ref = None
    if plugin:
        kebab = generate.kebab(generate.validate_name(plugin))
        request = generate.ScaffoldRequest(
            name=plugin, points="filter,score", module=module or f"example.com/{name}/{kebab}", k8s_version=minor,
            out=directory / "plugins" / kebab, cache_dir=settings.cache_dir(c.config), tidy=tidy)
        with phase("init.plugin", f"{plugin} in {request.out}"):
            result = generate.scaffold(request)
        ref = starter.PluginRef(name=plugin, path=f"./plugins/{kebab}", package=result.package)
    written = starter.write(target, starter.spec_text(name, minor, ref))
    if replacing:
        log(f"replaced {written} (--force)", always=True)
    emit(str(written))
    log("next:")
    for step in (f"`inv config.validate {written} --fields-only`   check every field",
                 f"`inv build {written}`   compile the scheduler (Docker and Go)",
                 f"`inv image.build {written}`   package it as an image (then image.push, deploy)"):
        log("  " + for_program(step).replace("`", "", 2))


def _check_spec_name(name: str, minor: str, target: Path) -> None:
    """Before anything is written: the starter spec passes the spec's own checks (its `name` above all),
    so `init` never writes a spec `config.validate` refuses."""
    try:
        spec_mod.loads(starter.spec_text(name, minor, None), target, check_files=False)
    except UserError as exc:
        errors = getattr(exc, "errors", None)
        reason = f"{errors[0][0]}: {errors[0][1]}" if errors else exc.message
        raise UserError(f"--name {name!r}: the spec's {reason}", "choose a lower-case DNS name, e.g. "
                        f"{re.sub(r'[^a-z0-9-]+', '-', name.lower()).strip('-') or 'my-scheduler'}; nothing was written") from None
