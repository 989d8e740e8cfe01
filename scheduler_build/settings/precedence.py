"""The one precedence rule: flag > spec > environment > settings file > default.

Every task decides every value through `decide` (commands._common.option calls it), so `build` and
`image.build` cannot disagree on, say, the name of the dist/ directory.
"""

from __future__ import annotations

import sys
from typing import Any

from scheduler_build import settings
from scheduler_build.settings import options

# Where the spec sits: above every setting, below the command line. The spec is the project's own,
# versioned description of what it builds; a setting (file or environment) is a default for many
# projects, so it fills what the spec leaves open and never silently changes what the spec says.
PRECEDENCE = ("flag", "spec", "environment", "settings file", "default")


def decide(config: Any, dotted: str, flag: Any = None, spec: Any = None, spec_field: str = "") -> Any:
    """THE precedence rule, the one place it is written: flag > spec > environment > settings file > default.

    `flag` is None when not given; `spec` is None or "" when there is no spec or it leaves the value open
    (`spec_field` names it, e.g. "name", for the one-line notes). A flag that overrides the spec, and a
    setting the spec overrides, each say so in one line on stderr (once per run)."""
    if flag is not None:
        if spec not in (None, "") and str(spec) != str(flag):
            note(f"{options.flag_of(dotted)} {flag} overrides the spec's {spec_field or dotted} {spec}")
        return flag
    if spec not in (None, ""):
        level = origin(config, dotted)
        if level is not None and str(settings.lookup(config, dotted)) != str(spec):
            flag = options.flag_of(dotted)
            choose = f"--spec FILE {flag} VALUE" if dotted == "k8s.version" else flag  # alone, it builds without the spec
            note(f"{level} = {settings.lookup(config, dotted)} is overridden by the spec's {spec_field or dotted} {spec} "
                  f"(pass {choose} to choose)")
        return spec
    return settings.get(config, dotted)


_LEVELS = (("_overrides", None, "the caller"), ("_runtime", "_runtime_path", "--config"), ("_env", None, "environment"),
           ("_project", "_project_path", "file"), ("_user", "_user_path", "file"), ("_system", "_system_path", "file"))


def origin(config: Any, dotted: str) -> str | None:
    """Which source set a setting, as an error or note names it: `environment variable X`, `FILE: key`;
    None when nothing did (the default holds)."""
    for attr, path_attr, kind in _LEVELS:
        node: Any = getattr(config, attr, None) or {}
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            continue
        if kind == "environment":
            prefix = (getattr(config, "env_prefix", None) or getattr(config, "prefix", None) or "invoke").upper()
            return f"environment variable {prefix.replace('-', '_')}_{dotted.replace('.', '_').upper()}"
        path = getattr(config, path_attr, None) if path_attr else None
        return f"{path}: {dotted}" if path else f"setting {dotted}"
    return None


_noted: set[str] = set()


def note(message: str) -> None:
    """One `note:` line on stderr, once per run: a value decided otherwise than a reader might expect."""
    if message not in _noted:
        _noted.add(message)
        print(f"note: {message}", file=sys.stderr, flush=True)
