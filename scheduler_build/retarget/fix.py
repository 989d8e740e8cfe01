"""`plugin.retarget --fix`: the mechanical part of porting a plugin's code to the target's framework (pure).

From the API changes read from both releases' sources (surface_diff), each file of the module is rewritten:

- a call of a renamed method calls the new name (`GetPodGroupSchedulingCycle()` -> `GetPodGroupCycleState()`);
- a call of a method that gained a `klog.Logger` passes one from the enclosing function's
  `context.Context` (`klog.FromContext(ctx)`), or `klog.TODO()` when it has none, importing klog/v2;
- a type that implemented an interface whole (a fake `Handle`) gets each method the target adds, with the
  target's signature, zero results and a `TODO(retarget)` comment: never a panic.

What it cannot do by rule (a changed result, a removed method, a new parameter of another type) is
reported with file:line. Only the module's own Go files (vendor left out) are ever read or written; the
caller shows the diff first and writes only with --fix.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build.errors import UserError
from scheduler_build.golang import gotool

from scheduler_build.resolve import framework_surface
from scheduler_build.resolve.framework_surface import FrameworkSurface
from scheduler_build.retarget import surface_diff
from scheduler_build.resolve import versions
from scheduler_build.scaffold import handle_fake, signatures

KLOG = '"k8s.io/klog/v2"'
_FUNC = re.compile(r"^func\b.*$")
_CTX_PARAM = re.compile(r"(\w+)\s+context\.Context\b")
_IMPORT_BLOCK = re.compile(r"^import \($", re.M)


@dataclass
class Fixes:
    files: dict[str, str] = field(default_factory=dict)  # path -> the new text (changed files only)
    done: list[str] = field(default_factory=list)  # file:line: what was changed
    not_fixed: list[str] = field(default_factory=list)  # file:line: what is left to do by hand

    def diff(self, before: dict[str, str]) -> str:
        return "".join("".join(difflib.unified_diff(before[name].splitlines(keepends=True), text.splitlines(keepends=True),
                                                    fromfile=f"a/{name}", tofile=f"b/{name}"))
                       for name, text in sorted(self.files.items()))


def _logger_inserted(change: surface_diff.ApiChange) -> int | None:
    """The position of the one klog.Logger parameter a changed method gained, else None."""
    before = signatures.parse(change.before)
    after = signatures.parse(change.after)
    types_before, types_after = [t for _, t in before.params], [t for _, t in after.params]
    if before.results != after.results or len(types_after) != len(types_before) + 1:
        return None
    for i, go_type in enumerate(types_after):
        if go_type == "klog.Logger" and types_after[:i] + types_after[i + 1:] == types_before:
            return i
    return None


def _context_of(lines: list[str], number: int) -> str:
    """The name of the context.Context parameter of the function enclosing line `number` (0-based), or ""."""
    for i in range(number, -1, -1):
        if _FUNC.match(lines[i]):
            found = _CTX_PARAM.search(lines[i])
            return found.group(1) if found and found.group(1) != "_" else ""
    return ""


def _insert_argument(line: str, method: str, position: int, value: str) -> str:
    start = line.index(f".{method}(") + len(method) + 2
    depth, args, current, end = 0, [], "", start
    for end in range(start, len(line)):
        char = line[end]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        if char == "," and depth == 0:
            args.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        args.append(current)
    args = [a.strip() for a in args]
    args.insert(position, value)
    return line[:start] + ", ".join(args) + line[end:]


def _ensure_import(text: str, spec: str) -> str:
    if spec in text:
        return text
    block = _IMPORT_BLOCK.search(text)
    if block:
        third = re.compile(r'^\t(?:\w+ )?"[^"/]+\.[^"]*/', re.M).search(text, block.end())
        if "." in spec.split("/")[0] and third:  # beside the first third-party import (gofmt sorts the group)
            return text[:third.start()] + f"\t{spec}\n" + text[third.start():]
        return text[:block.end()] + f"\n\t{spec}" + text[block.end():]
    package = re.search(r"^package \w+\n", text, re.M)
    at = package.end() if package else 0
    return text[:at] + f"\nimport {spec}\n" + text[at:]


def rewrite_calls(name: str, text: str, changes: list[surface_diff.ApiChange], fixes: Fixes, target: str) -> str:
    renamed = {c.method: c.after.split("(", 1)[0] for c in changes if c.kind == "renamed"}
    logger = {c.method: pos for c in changes if c.kind == "changed" and (pos := _logger_inserted(c)) is not None}
    other = {c.method: c for c in changes if c.kind in ("changed", "removed") and c.method not in logger}
    lines = text.splitlines(keepends=True)
    needs_klog = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("//", "func ")):
            continue
        for old, new in renamed.items():
            if f".{old}(" in line:
                line = line.replace(f".{old}(", f".{new}(")
                fixes.done.append(f"{name}:{i + 1}: {old} -> {new} (renamed in Kubernetes {target})")
        for method, position in logger.items():
            if f".{method}(" in line:
                ctx = _context_of(lines, i)
                value = f"klog.FromContext({ctx})" if ctx else "klog.TODO()"
                line = _insert_argument(line, method, position, value)
                needs_klog = True
                fixes.done.append(f"{name}:{i + 1}: {method} is passed {value} (its new klog.Logger argument)")
        for method, change in other.items():
            if f".{method}(" in line:
                fixes.not_fixed.append(f"{name}:{i + 1}: {change.line()} (by hand)")
        lines[i] = line
    out = "".join(lines)
    return _ensure_import(out, KLOG) if needs_klog else out


# The packages a stub's signature may name, by the qualifier the framework's source uses for them.
IMPORTS = {"fwk": '"k8s.io/kube-scheduler/framework"', "klog": KLOG, "v1": 'v1 "k8s.io/api/core/v1"',
           "types": '"k8s.io/apimachinery/pkg/types"', "context": '"context"', "time": '"time"',
           "runtime": '"k8s.io/apimachinery/pkg/runtime"'}
_FWK_ALIAS = re.compile(r'^\s*(?:import\s+)?(\w+)?\s*"k8s\.io/kube-scheduler/framework"', re.M)


def stubs(sources: dict[str, str], old: FrameworkSurface, new: FrameworkSurface,
          changes: list[surface_diff.ApiChange], fixes: Fixes) -> dict[str, str]:
    """Each method a type that implemented an interface whole now lacks, appended to the file declaring it."""
    out = dict(sources)
    for use in surface_diff.uses(sources, old, new, changes):
        if ":" in use.where or " implements " not in f" {use.text}":
            continue
        receiver, interface = use.where, use.change.interface
        home = next((n for n, t in sorted(out.items()) if re.search(rf"^func \(\w+ \*?{receiver}\)", t, re.M)), None)
        if home is None:
            continue
        have = set(re.findall(rf"^func \(\w+ \*?{receiver}\) (\w+)\(", out[home], re.M))
        found = _FWK_ALIAS.search(out[home])
        alias = (found.group(1) or "framework") if found else "fwk"
        added = []
        for declaration in new.method_set(interface):
            method = declaration.split("(", 1)[0]
            if method in have:
                continue
            text = (f"func (f *{receiver}) {signatures.head(new, interface, method)} {{\n"
                    f"\t{signatures.returns(new, interface, method)}\n}}\n")
            added.append(f"\n// {method} is new in {interface} of Kubernetes {new.version}.\n"
                         f"// TODO(retarget): implement it; this stub returns zero values.\n"
                         + re.sub(r"\bfwk\.", f"{alias}.", text))
            fixes.done.append(f"{home}: {receiver}.{method} stubbed with a TODO(retarget) comment")
        if not added:
            continue
        text = out[home].rstrip("\n") + "\n" + "".join(added)
        for qualifier in sorted(set(re.findall(r"\b([a-z]\w*)\.[A-Z]", "".join(added)))):
            if qualifier == alias and found:
                continue
            spec = IMPORTS.get("fwk" if qualifier == alias else qualifier)
            if spec:
                text = _ensure_import(text, spec if qualifier != alias or alias == "fwk" else f'{alias} {spec}')
            else:
                fixes.not_fixed.append(f"{home}: the stubs name {qualifier}.*: import its package")
        out[home] = text
    return out


_OLD_FRAMEWORK = re.compile(r'^\s*(?:import\s+)?(\w+\s+)?"k8s\.io/kubernetes/pkg/scheduler/framework"\s*$', re.M)
_FACTORY = re.compile(r"^func (\w+)\((\w+) runtime\.Object, (\w+) \*?\w+\.Handle\)", re.M)


def move_imports(name: str, text: str, new: FrameworkSurface, still_there: frozenset[str], fixes: Fixes) -> str:
    """`framework.X` of k8s.io/kubernetes/pkg/scheduler/framework -> `fwk.X` for each X the target declares in
    k8s.io/kube-scheduler/framework and no longer in the old package (`still_there`); a pointer to what is an
    interface there (`*framework.CycleState`) becomes the interface. Imports follow."""
    found = _OLD_FRAMEWORK.search(text)
    if not found:
        return text
    alias = (found.group(1) or "framework").strip()
    moved = {n for n, home in new.homes.items() if home == framework_surface.STAGING_PACKAGE and n not in still_there}
    use = re.compile(rf"(\*?)\b{re.escape(alias)}\.([A-Z]\w*)\b")

    def swap(match: re.Match) -> str:
        star, ident = match.group(1), match.group(2)
        if ident not in moved:
            return match.group(0)
        return ("" if ident in new.interfaces else star) + f"fwk.{ident}"

    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("//") or _OLD_FRAMEWORK.match(line):
            continue
        changed = use.sub(swap, line)
        if changed != line:
            fixes.done.append(f"{name}:{i + 1}: {alias}.* -> fwk.* (moved to {framework_surface.STAGING_PACKAGE})")
            lines[i] = changed
    out = "".join(lines)
    if "fwk." in out:
        out = _ensure_import(out, f'fwk "{framework_surface.STAGING_PACKAGE}"')
    if not re.search(rf"\b{re.escape(alias)}\.", out.replace(found.group(0), "")):
        out = out.replace(found.group(0), "", 1)  # the old import is no longer used
    return out


def context_factories(name: str, text: str, fixes: Fixes, in_package: tuple[str, ...] = ()) -> str:
    """A factory without the context the framework passes since 1.28 (`New(obj runtime.Object, h Handle)`) gains
    `_ context.Context` first; calls of it in the file, and of `in_package` (the old-style factories other files
    of its Go package declare: its tests call them), are passed `context.TODO()`."""
    factories = [m.group(1) for m in _FACTORY.finditer(text)]
    if not factories and not in_package:
        return text
    out = _FACTORY.sub(lambda m: f"func {m.group(1)}(_ context.Context, {m.group(2)} runtime.Object, {m.group(3)} "
                                 + m.group(0).split(f"{m.group(3)} ", 1)[1], text)
    for factory in factories:
        fixes.done.append(f"{name}: {factory} takes the context.Context a plugin factory is given (Kubernetes 1.28+)")
    for factory in dict.fromkeys([*factories, *in_package]):
        before = out
        out = re.sub(rf"(?<![\w.]){factory}\((?!_ context|context\.|ctx\b)(?!\))", f"{factory}(context.TODO(), ", out)
        if out != before and factory not in factories:
            fixes.done.append(f"{name}: its calls of {factory} pass context.TODO() (the factory gained a context)")
    return _ensure_import(out, '"context"') if out != text else text


def _package_factories(sources: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Directory -> the old-style factories its files declare (one Go package per directory)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, text in sources.items():
        directory = name.rpartition("/")[0]
        found[directory] = found.get(directory, ()) + tuple(m.group(1) for m in _FACTORY.finditer(text))
    return found


_DECLARATION = re.compile(r"^func \(\w+ \*?(\w+)\) ((\w+)\(.*)\{\s*(?:.*\})?\s*$")


def signature_mismatches(sources: dict[str, str], new: FrameworkSurface) -> list[str]:
    """file:line of each method of a plugin type whose types differ from the target's extension-point
    interface declaring it (`Score(..., nodeName string)` where the target takes a NodeInfo): by hand."""
    out: list[str] = []
    points = [i for i in new.interfaces if i.endswith(("Plugin", "Extensions")) and i != "Plugin"]
    for name, text in sorted(sources.items()):
        for number, line in enumerate(text.splitlines(), 1):
            match = _DECLARATION.match(line)
            if not match:
                continue
            method = match.group(3)
            interface = next((i for i in points if new.signature(i, method) and method in new.methods.get(i, ())), None)
            if interface is None:
                continue
            wanted = signatures.head(new, interface, method)
            shape = surface_diff._shape(match.group(2).strip().replace("framework.", "fwk."))
            if shape != surface_diff._shape(new.signature(interface, method)):
                out.append(f"{name}:{number}: {match.group(1)}.{method} does not have {interface}'s signature in "
                           f"Kubernetes {new.version}: {wanted} (port its body by hand)")
    return out


_POINTER = re.compile(r"\*(?:framework|fwk)\.([A-Z]\w*)\b")


def interface_params(name: str, text: str, new: FrameworkSurface, fixes: Fixes) -> str:
    """An extension-point method declared with a pointer to a framework struct the target made an interface
    of the same name (1.27's `state *framework.CycleState, nodeInfo *framework.NodeInfo`, `fwk.CycleState`
    and `fwk.NodeInfo` from 1.34 on) takes the interface, when that alone gives the target's signature.
    Bodies are not touched: a field the interface reads through a getter is listed by the compile."""
    points = [i for i in new.interfaces if i.endswith(("Plugin", "Extensions")) and i != "Plugin"]
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        match = _DECLARATION.match(line)
        interface = match and next((i for i in points if match.group(3) in new.methods.get(i, ())), None)
        if not interface:
            continue
        head = match.group(2)
        swapped = _POINTER.sub(lambda m: f"fwk.{m.group(1)}" if m.group(1) in new.interfaces else m.group(0), head)
        wanted = surface_diff._shape(new.signature(interface, match.group(3)))
        if swapped != head and surface_diff._shape(swapped.strip().replace("framework.", "fwk.")) == wanted:
            lines[number] = line.replace(head, swapped, 1)
            fixes.done.append(f"{name}:{number + 1}: {match.group(1)}.{match.group(3)} takes the interfaces "
                              f"{interface} declares in Kubernetes {new.version} (was a pointer to a struct)")
    return "".join(lines)


def pointers_became_interfaces(change: surface_diff.ApiChange, new: FrameworkSurface) -> bool:
    """Whether a changed method differs only in top-level pointers to framework structs that the target made
    interfaces of the same name (1.27's `Filter(..., *CycleState, ..., *NodeInfo)`, `NodeInfoLister.Get`'s
    `*NodeInfo` result). A call of it needs no edit: a pointer to the old struct, which the target still
    declares, satisfies the interface, and a result used through its methods reads the same. A field read
    through such a result, or a slice of them, is left to the compile, which names it."""
    if change.kind != "changed" or not change.before or not change.after:
        return False
    params, results = surface_diff._shape(change.before)

    def swap(go_type: str) -> str:
        return go_type[1:] if go_type.startswith("*") and go_type[1:] in new.interfaces else go_type

    return (tuple(map(swap, params)), tuple(map(swap, results))) == surface_diff._shape(change.after)


def callable_as_written(old: FrameworkSurface, new: FrameworkSurface, changes: list[surface_diff.ApiChange]) -> set[str]:
    """Names of methods that some interface of both releases still takes as a call was written: unchanged, or
    changed only in pointers that became interfaces. Calls are matched by name, without types: `z.Filter(` may
    be a FilterPlugin's (1.27's pointers, fine) as well as an Extender's (changed), so such a call is not said
    to need porting by hand; the compile has the last word and its errors are explained."""
    broken = {(c.interface, c.method) for c in changes
              if c.kind in ("changed", "removed", "renamed") and not pointers_became_interfaces(c, new)}
    return {sig.split("(", 1)[0] for interface in old.interfaces if interface in new.interfaces
            for sig in old.method_set(interface) if (interface, sig.split("(", 1)[0]) not in broken}


def fix(sources: dict[str, str], old: FrameworkSurface, new: FrameworkSurface,
        still_there: frozenset[str] = frozenset()) -> Fixes:
    """The rewritten files of a module (path -> text: its own .go files) and what was and was not fixed.
    `still_there`: the names the target's k8s.io/kubernetes/pkg/scheduler/framework still declares."""
    changes = surface_diff.diff(old, new)
    # Matched by name alone, a call is "by hand" only when no interface still takes it as written (a logger is passed).
    as_written = callable_as_written(old, new, changes)
    calls = [c for c in changes if not (c.kind in ("changed", "removed") and c.method in as_written
                                        and (c.kind == "removed" or _logger_inserted(c) is None))]
    fixes = Fixes()
    factories = _package_factories(sources)
    rewritten = {name: context_factories(name, move_imports(name, interface_params(name, text, new, fixes), new,
                                                            still_there, fixes), fixes,
                                         factories.get(name.rpartition("/")[0], ()))
                 for name, text in sorted(sources.items())}
    rewritten = {name: rewrite_calls(name, text, calls, fixes, new.version) for name, text in rewritten.items()}
    rewritten = {name: regenerated_fake(name, text, new, fixes) for name, text in rewritten.items()}
    rewritten = stubs(rewritten, old, new, changes, fixes)
    fixes.not_fixed += signature_mismatches(rewritten, new)
    fixes.files = {name: text for name, text in rewritten.items() if text != sources[name]}
    return fixes


def regenerated_fake(name: str, text: str, new: FrameworkSurface, fixes: Fixes) -> str:
    """The scaffold's generated Handle fake, generated again from the target's Handle (its new and changed
    methods); a hand-written fake is left to `stubs`."""
    package = re.search(r"^package (\w+)", text, re.M)
    if handle_fake.MARK not in text.split("\nimport", 1)[0] or not package:
        return text
    fresh = handle_fake.render_file(new, package.group(1), versions.minor_of(new.version))
    if fresh != text:
        fixes.done.append(f"{name}:1: the generated Handle fake regenerated from Kubernetes {new.version}'s Handle")
    return fresh


def gofmt(text: str) -> str:
    """The text as gofmt prints it (imports sorted in their groups); unchanged when gofmt cannot parse it."""
    proc = subprocess.run([str(Path(gotool.binary()).parent / "gofmt")], input=text, capture_output=True, text=True,
                          timeout=60)
    return proc.stdout if proc.returncode == 0 else text


def check_clean(path: Path) -> None:
    """--fix rewrites files in place: only in a git work tree with nothing uncommitted under `path` (git can undo it)."""
    proc = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--", "."], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise UserError(f"--fix: {path} is not in a git work tree, so its rewrite could not be undone",
                        "commit the module to git first, or pass --allow-dirty")
    dirty = [line[3:] for line in proc.stdout.splitlines() if line.strip()]
    if dirty:
        raise UserError(f"--fix: {path} has uncommitted changes ({', '.join(dirty[:3])}"
                        f"{', ...' if len(dirty) > 3 else ''})", "commit or stash them first, or pass --allow-dirty")
