"""Method declarations as the target's framework declares them, for the scaffold's templates (pure).

A template names the method and the parameter names its body uses; the parameter and result types,
their number and order come from the target's source (resolve.framework_surface), qualified the way
the plugin's file imports them (`fwk.` for k8s.io/kube-scheduler/framework, `framework.` for
k8s.io/kubernetes/pkg/scheduler/framework where the interfaces still lived there). A signature a new
minor changes is followed with no code change: a new parameter is named `_`, a new result gets its
zero value in the generated returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.errors import UserError
from scheduler_build.resolve.framework_surface import FrameworkSurface

_EXPORTED = re.compile(r"(?<![\w.])([A-Z]\w*)")
_NAMED = re.compile(r"^([A-Za-z_]\w*)\s+(\S.*)$")
_KEYWORDS = {"chan", "func", "map", "struct", "interface"}


@dataclass(frozen=True)
class Method:
    name: str
    params: tuple[tuple[str, str], ...]  # (name or "", qualified type)
    results: tuple[str, ...]  # qualified types


def split_top(text: str) -> list[str]:
    """`a, b func(x, y int), c` -> its top-level comma-separated parts."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _close(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return len(text) - 1


def parse(declaration: str, qualify=lambda t: t) -> Method:
    """`Filter(ctx context.Context, state CycleState) *Status` -> Method (types passed through `qualify`)."""
    name, _, rest = declaration.partition("(")
    end = _close("(" + rest, 0)
    params_text, results_text = ("(" + rest)[1:end], ("(" + rest)[end + 1:].strip()
    pieces = split_top(params_text)
    named = any(_NAMED.match(p) and _NAMED.match(p).group(1) not in _KEYWORDS for p in pieces)
    params: list[tuple[str, str]] = []
    pending: list[str] = []
    for piece in pieces:
        match = _NAMED.match(piece) if named else None
        if named and not match:  # `a, b T`: a takes the type that follows
            pending.append(piece)
            continue
        if match:
            for waiting in pending:
                params.append((waiting, qualify(match.group(2))))
            pending = []
            params.append((match.group(1), qualify(match.group(2))))
        else:
            params.append(("", qualify(piece)))
    if results_text.startswith("("):
        results = [(_NAMED.match(r).group(2) if _NAMED.match(r) else r) for r in split_top(results_text[1:-1])]
    else:
        results = [results_text] if results_text else []
    return Method(name.strip(), tuple(params), tuple(qualify(r) for r in results))


def qualifier(surface: FrameworkSurface, interface: str):
    """Types as the interface's own package spells them -> as the plugin's file spells them."""
    alias = surface.home_alias(interface)
    return lambda go_type: _EXPORTED.sub(lambda m: f"{alias}.{m.group(1)}", go_type)


def method(surface: FrameworkSurface, interface: str, name: str) -> Method:
    declaration = surface.signature(interface, name)
    if not declaration:
        raise UserError(f"the framework of Kubernetes {surface.version} declares no {interface}.{name}",
                        "the scaffold's template for that point no longer fits this release: report this")
    return parse(declaration, qualifier(surface, interface))


def head(surface: FrameworkSurface, interface: str, name: str, names: str = "") -> str:
    """`Filter(_ context.Context, state fwk.CycleState, ...) *fwk.Status`: the framework's declaration with the
    parameter names the template's body uses, every other parameter `_`.

    `names`: space-separated `name:TypeSuffix` (bound to the first parameter whose type ends so, wherever a
    new minor moved it) or a bare `name` (bound by position among the rest)."""
    m = method(surface, interface, name)
    bound = ["_"] * len(m.params)
    for token in names.split():
        wanted, _, suffix = token.partition(":")
        free = [i for i, (_, go_type) in enumerate(m.params) if bound[i] == "_" and go_type.endswith(suffix)]
        if free:
            bound[free[0]] = wanted
    groups: list[tuple[list[str], str]] = []
    for param, (_, go_type) in zip(bound, m.params):  # `a, b T` as gofmt'd code writes neighbours of one type
        if groups and groups[-1][1] == go_type:
            groups[-1][0].append(param)
        else:
            groups.append(([param], go_type))
    params = ", ".join(f"{', '.join(group)} {go_type}" for group, go_type in groups)
    results = m.results[0] if len(m.results) == 1 else (f"({', '.join(m.results)})" if m.results else "")
    return f"{name}({params})" + (f" {results}" if results else "")


def zero(go_type: str) -> str:
    if go_type.startswith(("*", "[]", "map[", "func", "chan")) or go_type in ("error", "any", "interface{}"):
        return "nil"
    if re.match(r"^u?int\d*$|^float\d+$|^time\.Duration$", go_type):
        return "0"
    return {"string": '""', "bool": "false"}.get(go_type, f"*new({go_type})")


def returns(surface: FrameworkSurface, interface: str, name: str, *leading: str) -> str:
    """`return a, b` with `leading` values first and zero values for every further result."""
    results = method(surface, interface, name).results
    interfaces = set(surface.interfaces)
    values = [*leading[: len(results)],
              *("nil" if r.split(".")[-1] in interfaces else zero(r) for r in results[len(leading):])]
    return "return " + ", ".join(values) if values else "return"


def param_type(surface: FrameworkSurface, interface: str, name: str, index: int) -> str:
    params = method(surface, interface, name).params
    return params[index][1] if index < len(params) else ""
