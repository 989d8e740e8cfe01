"""The one Jinja environment: StrictUndefined, the packaged templates only, deterministic output.

Jinja is imported when something is first rendered, not with this module: a build whose wrapper module
was rendered before (build/workspace.py keeps it) renders nothing, and the import is a tenth of its
start-up's CPU on a loaded machine."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scheduler_build import resources

if TYPE_CHECKING:
    import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # noqa: PLC0415 - on first use (above)

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


def source(template: str) -> str:
    """A template's own text (to key what was rendered from it), read without Jinja."""
    return resources.templates().joinpath(*template.split("/")).read_text()
