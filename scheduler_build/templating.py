"""The one Jinja environment: StrictUndefined, the packaged templates only, deterministic output."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from scheduler_build import resources


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(resources.TEMPLATES_PACKAGE, ""),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
