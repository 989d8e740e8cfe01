"""Reading a spec file: YAML that refuses duplicate keys, then every section checked."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from scheduler_build import safeyaml
from scheduler_build.spec.errors import SPEC_HINT, SpecError
from scheduler_build.spec.fields import Fields
from scheduler_build.spec.model import Spec
from scheduler_build.spec.checks_top import check_spec


class _UniqueKeyLoader(safeyaml.BoundedLoader):
    """Bounded safe_load that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) and key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key] + 1})", mark)
        if isinstance(key, (str, int, float, bool)):
            seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# `--spec -`: the spec is standard input, read once into memory (never a file in the working directory,
# which may be read-only), named `<stdin>` in messages; its relative paths mean what they would in a file
# in the working directory, as kubectl's `-f -`.
STDIN, STDIN_NAME = "-", "<stdin>"
_STDIN_TEXT: list[str] = []


def stdin_text() -> str:
    """Standard input's text, read (bounded) on first use and kept for the run."""
    if not _STDIN_TEXT:
        text = sys.stdin.read(safeyaml.MAX_BYTES + 1)
        if len(text) > safeyaml.MAX_BYTES:
            raise SpecError(STDIN_NAME, [("", f"refused: more than the {safeyaml.MAX_BYTES:,}-byte limit")],
                            "a build spec is a few KiB")
        _STDIN_TEXT.append(text)
    return _STDIN_TEXT[0]


def is_stdin(path: str | Path | None) -> bool:
    return path is not None and (str(path) in (STDIN, STDIN_NAME) or Path(str(path)).name == STDIN_NAME)


def load(path: str | Path, check_files: bool = True) -> Spec:
    """Read and validate a build spec (`-`: standard input); raise SpecError listing every problem.

    ``check_files``: also require local plugin directories (with a go.mod) and
    patch files to exist. Turn off only to inspect a spec away from its tree.
    """
    if is_stdin(path):
        return loads(stdin_text(), Path.cwd() / STDIN_NAME, source=STDIN_NAME, check_files=check_files)
    path = Path(path)
    source = str(path)
    try:
        text = safeyaml.read_text(path)
    except safeyaml.InputLimitError as exc:
        raise SpecError(source, [("", f"refused: {exc}")], "a build spec is a few KiB") from None
    except FileNotFoundError:
        raise SpecError(source, [("", "no such file")], "pass --spec PATH to an existing build spec; " + SPEC_HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(source, [("", f"cannot read: {exc}")]) from None
    return loads(text, path.resolve(), source=source, check_files=check_files)


def loads(text: str, path: Path, source: str | None = None, check_files: bool = True) -> Spec:
    """Validate spec text as if it were the file at ``path`` (relative paths resolve against it)."""
    source = source or str(path)
    try:
        data = safeyaml.load_yaml(text, _UniqueKeyLoader)
    except safeyaml.InputLimitError as exc:
        raise SpecError(source, [("", f"refused: {exc}")], "a build spec is a few KiB") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SpecError(source, [(where, f"not valid YAML: {exc.problem or exc}")]) from None
    except yaml.YAMLError as exc:
        raise SpecError(source, [("", f"not valid YAML: {exc}")]) from None
    if data is None:
        raise SpecError(source, [("", "the file is empty")])
    fields = Fields()
    spec = check_spec(fields, data, Path(path).resolve(), check_files)
    if fields.errors:
        raise SpecError(source, fields.errors)
    assert spec is not None
    return spec
