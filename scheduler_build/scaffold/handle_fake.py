"""The scaffold's test fake of the framework's `Handle`, generated from the target's own interface (pure).

Every hand-written fake Handle breaks when a minor adds a method (1.38: SharedPodGroupHierarchyTracker,
PreemptionManager) or changes one (NominatedPodsForNode gained a logger). This one is the method set of
the target's `Handle` (its embedded interfaces' included), as resolve.framework_surface read it, each
method with zero results, and the imports its parameter and result types need, as the framework's files
import them. No list of methods is kept here.
"""

from __future__ import annotations

import re

from scheduler_build.errors import UserError
from scheduler_build.resolve.framework_surface import KUBERNETES_PACKAGE, STAGING_PACKAGE, FrameworkSurface
from scheduler_build.scaffold import signatures
from scheduler_build.templating import render

FAKE = "fakeHandle"
TEMPLATE = "scaffold/handle_fake_test.go.j2"
MARK = "from the Handle interface of Kubernetes"  # in the generated file's header: retarget --fix regenerates it
_QUALIFIED = re.compile(r"(?<![\w.])([a-z]\w*)\.[A-Z]")


def methods(surface: FrameworkSurface) -> list[str]:
    """`func (fakeHandle) Name(types) results { return zeros }`, one per method of Handle's method set."""
    declared = surface.method_set("Handle")
    if not declared:
        raise UserError(f"the framework of Kubernetes {surface.version} declares no Handle interface",
                        "the scaffold's test fake cannot be generated for this release: report this")
    qualify = signatures.qualifier(surface, "Handle")
    interfaces = set(surface.interfaces)
    out = []
    for declaration in declared:
        m = signatures.parse(declaration, qualify)
        params = ", ".join(go_type for _, go_type in m.params)
        results = m.results[0] if len(m.results) == 1 else (f"({', '.join(m.results)})" if m.results else "")
        values = ["nil" if r.split(".")[-1] in interfaces and "." in r else signatures.zero(r) for r in m.results]
        body = "return " + ", ".join(values) if values else ""
        head = f"func ({FAKE}) {m.name}({params})" + (f" {results}" if results else "")
        out.append(f"{head} {{\n\t{body}\n}}" if body else f"{head} {{}}")
    return out


def imports(surface: FrameworkSurface, bodies: list[str]) -> list[str]:
    """The import lines the generated methods use, `alias "path"` as gofmt sorts them."""
    home = surface.home_alias("Handle")
    known = {**surface.imports, "fwk": STAGING_PACKAGE, "framework": KUBERNETES_PACKAGE}
    used = sorted({alias for text in bodies for alias in _QUALIFIED.findall(text.split("{", 1)[0])} | {home})
    lines = []
    for alias in used:
        path = known.get(alias)
        if path is None:
            raise UserError(f"the framework of Kubernetes {surface.version} spells a Handle type with {alias}., "
                            "imported by none of its files", "report this: the scaffold's Handle fake cannot import it")
        last = path.rstrip("/").split("/")[-1]
        bare = alias == last and not re.fullmatch(r"v\d+", last)  # `v1 "k8s.io/api/core/v1"` stays spelt out
        lines.append(f'\t"{path}"' if bare else f'\t{alias} "{path}"')
    return sorted(lines, key=lambda line: line.split('"')[1])


def render_file(surface: FrameworkSurface, package: str, minor: str) -> str:
    """The whole generated test file for `package` (what the scaffold writes, and retarget --fix rewrites)."""
    bodies = methods(surface)
    return render(TEMPLATE, package=package, minor=minor, handle_fake=FAKE, handle_methods=bodies,
                  handle_imports=imports(surface, bodies), T={"Handle": f"{surface.home_alias('Handle')}.Handle"})
