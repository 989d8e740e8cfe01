"""`sbom`: the supplier and the author (with a contact) the SBOMs name, for the NTIA minimum elements."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields
from scheduler_build.spec.formats import EMAIL, HTTP_URL, PARTY_NAME
from scheduler_build.spec.model import Party, SbomInfo

_NAME_WHAT = "a name such as Acme Corp (no parentheses, no line breaks)"


def check_sbom(f: Fields, value: Any) -> SbomInfo:
    if value is None or f.mapping("sbom", value, ("supplier", "author")) is None:
        return SbomInfo()
    # The supplier needs a name; the author is the SBOM's contact, so it needs an email too.
    supplier = _party(f, "sbom.supplier", value.get("supplier"), required=("name",))
    author = _party(f, "sbom.author", value.get("author"), required=("name", "email"))
    return SbomInfo(supplier=supplier, author=author)


def _party(f: Fields, path: str, value: Any, required: tuple[str, ...]) -> Party | None:
    if value is None or f.mapping(path, value, ("name", "email", "url"), required=required) is None:
        return None
    name = f.optional(value, "name", f"{path}.name", lambda p, v: f.string(p, v, PARTY_NAME, _NAME_WHAT))
    email = f.optional(value, "email", f"{path}.email",
                       lambda p, v: f.string(p, v, EMAIL, "an email address such as sbom@acme.example.com"), default="")
    url = f.optional(value, "url", f"{path}.url",
                     lambda p, v: f.string(p, v, HTTP_URL, "an http(s) URL such as https://acme.example.com"), default="")
    return Party(name=name, email=email, url=url) if name else None
