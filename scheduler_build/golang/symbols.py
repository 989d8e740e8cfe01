"""Method sets of a Go module, as a compiled binary and the module's sources say: for keys that must
change when a plugin gains or loses a method or changes a method's signature, and stay the same when
only a body or a constant changes (config/batching_key.py, the batching verdict of `build`).

- `exported_methods(binary, modules)`: the exported methods (`pkg.(*T).M`, `pkg.T.M`) of the
  packages of `modules` that the linker kept, from the binary's function-name table (.gopclntab,
  which `-s -w` keeps: the runtime needs it). A method reachable through an interface is kept, and
  so is the wrapper of a promoted one (an embedded type's), under the outer type's name. The table
  holds no types, so a changed signature under the same name is not seen here; hence:
- `method_headers(source)`: each exported method's declaration without its body, receiver name
  dropped and blanks collapsed (pure), and `module_method_headers(directory)` over a module's files.
"""

from __future__ import annotations

import mmap
import os
import re
from pathlib import Path

from scheduler_build.build import elf

PCLNTAB = ".gopclntab"
# A method of a package, after the package path: `(*T).M` or `T.M`, T possibly instantiated (`T[...]`).
_METHOD = re.compile(r"(?:\(\*[A-Za-z_]\w*(?:\[.*\])?\)|[A-Za-z_]\w*(?:\[.*\])?)\.[A-Z]\w*")
# Comments, interpreted and raw strings, runes: blanked before headers are read, so a brace or a
# `func` inside one is not taken for code.
_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])*\'', re.S)
_METHOD_START = re.compile(r"(?m)^func\s*\(")
_RECEIVER_NAME = re.compile(r"^\(\s*[A-Za-z_]\w*\s+(?=[*A-Za-z_])")


def symbol_prefixes(module: str) -> tuple[str, str]:
    """How the linker spells the names of a module's packages: its root package (the last path element's
    dots escaped as %2e, Go's rule for symbol names) followed by `.`, and its subpackages (`module/`)."""
    head, _, last = module.rpartition("/")
    root = (head + "/" if head else "") + last.replace(".", "%2e")
    return root + ".", module + "/"


def split_symbol(name: str) -> tuple[str, str]:
    """`example.com/a/pkg.(*T).M` -> ("example.com/a/pkg", "(*T).M"): the package ends at the first `.`
    after the last `/` that comes before any `(` or `[` (type arguments may hold paths)."""
    plain_end = min((i for i in (name.find("("), name.find("[")) if i >= 0), default=len(name))
    dot = name.find(".", name.rfind("/", 0, plain_end) + 1)
    return (name, "") if dot < 0 else (name[:dot], name[dot + 1:])


def methods_in(names: list[str] | set[str], modules: list[str]) -> list[str]:
    """Of function names, the exported methods of the packages of `modules`, sorted (pure)."""
    prefixes = tuple(p for module in modules for p in symbol_prefixes(module))
    return sorted({n for n in names if n.startswith(prefixes) and _METHOD.fullmatch(split_symbol(n)[1])})


def exported_methods(binary: Path, modules: list[str]) -> list[str]:
    """The exported methods of `modules`' packages that `binary` holds (see the module's docstring).
    Raises OSError when the file cannot be read, ValueError when it has no Go function table."""
    if not modules:
        return []
    with open(binary, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        found = elf.section(data, PCLNTAB)
        if found is None:
            raise ValueError(f"{binary} has no {PCLNTAB} section")
        start, end = found[0], found[0] + found[1]
        names = set()
        # One pass per needle over ~30 MB: a module whose root needs no escaping has one needle for both
        # spellings (methods_in keeps only names with either prefix).
        for prefix in {module if symbol_prefixes(module)[0] == module + "." else p
                       for module in modules for p in symbol_prefixes(module)}:
            # Each name in the table ends with NUL: one that starts with the prefix follows a NUL.
            needle = b"\x00" + prefix.encode()
            at = data.find(needle, start, end)
            while at >= 0:
                stop = data.find(b"\x00", at + 1, end)
                names.add(data[at + 1:stop if stop >= 0 else end].decode(errors="replace"))
                at = data.find(needle, at + 1, end)
    return methods_in(names, modules)


def method_headers(source: str) -> list[str]:
    """The declarations (without bodies) of the exported methods in one Go file, receiver names dropped
    and blanks collapsed: `func (*T) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status)`."""
    code = _NOT_CODE.sub(lambda m: '""' if m.group()[0] in "\"`'" else " ", source)
    headers = []
    for start in _METHOD_START.finditer(code):
        receiver_end = _balanced(code, start.end() - 1)
        name = re.match(r"\s*([A-Za-z_]\w*)\s*(?=\()", code[receiver_end:])
        if not name or not name.group(1)[0].isupper():
            continue
        end = _header_end(code, _balanced(code, receiver_end + name.end()))
        receiver = _RECEIVER_NAME.sub("(", code[start.end() - 1:receiver_end])
        header = f"func {receiver} {name.group(1)}{code[receiver_end + name.end():end]}"
        headers.append(" ".join(header.split()))
    return headers


def module_method_headers(directory: Path) -> list[str]:
    """`method_headers` of every non-test .go file under a module's directory, sorted (a method moved to
    another file is the same method)."""
    headers: list[str] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if d not in ("testdata", "vendor") and not d.startswith((".", "_")))
        for name in sorted(filenames):
            if name.endswith(".go") and not name.endswith("_test.go"):
                headers += method_headers((Path(dirpath) / name).read_text(encoding="utf-8", errors="replace"))
    return sorted(headers)


def _balanced(code: str, at: int) -> int:
    """The index just past the bracket that closes the one at `at` (or the end of the text)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for index in range(at, len(code)):
        char = code[index]
        if char in pairs:
            stack.append(pairs[char])
        elif stack and char == stack[-1]:
            stack.pop()
            if not stack:
                return index + 1
    return len(code)


def _header_end(code: str, at: int) -> int:
    """Where the results that follow a parameter list end: at the body's `{` or the line's end (a method
    without a body), skipping the braces of an `interface{...}` or `struct{...}` result type."""
    index = at
    while index < len(code):
        char = code[index]
        if char in "([":
            index = _balanced(code, index)
            continue
        if char == "{":
            if not re.search(r"\b(?:interface|struct)\s*$", code[max(0, index - 16):index]):
                return index
            index = _balanced(code, index)
            continue
        if char == "\n":
            return index
        index += 1
    return index
