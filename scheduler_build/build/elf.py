"""Pure ELF inspection: class, machine, interpreter and dynamic section.

Enough of the format to prove a binary is static and built for the requested
architecture (the file header and program headers), to find a Go build ID, and to find a section
by name (golang/symbols.py reads Go's function-name table). Every function takes a buffer: bytes,
or an mmap of the file so that a 73 MB binary is not read to look at its headers.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PT_DYNAMIC = 2
PT_INTERP = 3
MACHINES = {0x3E: "amd64", 0xB7: "arm64", 0x03: "386", 0x28: "arm", 0x15: "ppc64le", 0x16: "s390x", 0xF3: "riscv64"}


class NotELF(ValueError):
    pass


@dataclass(frozen=True)
class ElfInfo:
    arch: str
    bits: int
    elf_type: str  # EXEC or DYN (static-pie) or other
    interpreter: str | None
    has_dynamic: bool

    @property
    def is_static(self) -> bool:
        return self.interpreter is None and not self.has_dynamic


def inspect(data: bytes) -> ElfInfo:
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise NotELF("not an ELF file")
    elf_class, endian = data[4], data[5]
    if elf_class not in (1, 2) or endian not in (1, 2):
        raise NotELF("unknown ELF class or byte order")
    order = "<" if endian == 1 else ">"
    if elf_class == 2:
        e_type, e_machine = struct.unpack_from(order + "HH", data, 16)
        (e_phoff,) = struct.unpack_from(order + "Q", data, 32)
        e_phentsize, e_phnum = struct.unpack_from(order + "HH", data, 54)
    else:
        e_type, e_machine = struct.unpack_from(order + "HH", data, 16)
        (e_phoff,) = struct.unpack_from(order + "I", data, 28)
        e_phentsize, e_phnum = struct.unpack_from(order + "HH", data, 42)
    interpreter = None
    has_dynamic = False
    for index in range(e_phnum):
        offset = e_phoff + index * e_phentsize
        if offset + e_phentsize > len(data):
            raise NotELF("truncated program header table")
        (p_type,) = struct.unpack_from(order + "I", data, offset)
        if p_type == PT_DYNAMIC:
            has_dynamic = True
        elif p_type == PT_INTERP:
            if elf_class == 2:
                p_offset, _, _, p_filesz = struct.unpack_from(order + "QQQQ", data, offset + 8)
            else:
                p_offset, _, _, p_filesz = struct.unpack_from(order + "IIII", data, offset + 4)
            interpreter = data[p_offset : p_offset + p_filesz].rstrip(b"\x00").decode(errors="replace")
    return ElfInfo(
        arch=MACHINES.get(e_machine, f"machine-{e_machine:#x}"),
        bits=64 if elf_class == 2 else 32,
        elf_type={2: "EXEC", 3: "DYN"}.get(e_type, str(e_type)),
        interpreter=interpreter,
        has_dynamic=has_dynamic,
    )


def inspect_file(path: Path) -> ElfInfo:
    """`inspect` of a file, mapped rather than read: the headers are all it looks at, and reading a 73 MB
    binary to see them cost a tenth of a second (more on a loaded machine) of the plugin-edit loop."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:  # an empty file cannot be mapped
            return inspect(b"")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return inspect(data)


PT_NOTE = 4
GO_NOTE_NAME, GO_BUILD_ID_TAG = b"Go\x00\x00", 4
BUILD_ID_READ = 1 << 16  # the Go linker puts its notes in the first page; read a little more


def _ident(data: Any) -> tuple[str, bool] | None:
    """(struct byte order, 64-bit) of an ELF file's start; None when it is not one we read."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    return ("<" if data[5] == 1 else ">"), data[4] == 2


def go_build_id(data: bytes) -> str | None:
    """The Go build ID in the ELF note "Go"/4 of `data` (the file's start), as `go tool buildid`
    prints it; None when `data` has none (not ELF, not Go, or the note is not in `data`)."""
    try:
        ident = _ident(data)
        if ident is None:
            return None
        order, wide = ident
        e_phoff = struct.unpack_from(order + ("Q" if wide else "I"), data, 32 if wide else 28)[0]
        e_phentsize, e_phnum = struct.unpack_from(order + "HH", data, 54 if wide else 42)
        for index in range(e_phnum):
            header = e_phoff + index * e_phentsize
            if struct.unpack_from(order + "I", data, header)[0] != PT_NOTE:
                continue
            if wide:
                p_offset, _, _, p_filesz = struct.unpack_from(order + "QQQQ", data, header + 8)
            else:
                p_offset, _, _, p_filesz = struct.unpack_from(order + "IIII", data, header + 4)
            found = _go_note(data[p_offset:p_offset + p_filesz], order)
            if found is not None:
                return found
    except (struct.error, OverflowError):  # truncated or absurd offsets: no ID we can trust
        return None
    return None


def file_go_build_id(path: Path) -> str | None:
    """The Go build ID of the file at `path` (read from its first BUILD_ID_READ bytes); None when
    it has none or cannot be read."""
    try:
        with open(path, "rb") as binary:
            return go_build_id(binary.read(BUILD_ID_READ))
    except OSError:
        return None


def _go_note(notes: bytes, order: str) -> str | None:
    offset = 0
    while offset + 12 <= len(notes):
        namesz, descsz, tag = struct.unpack_from(order + "III", notes, offset)
        name_at = offset + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        if desc_at + descsz > len(notes):
            return None
        if tag == GO_BUILD_ID_TAG and notes[name_at:name_at + namesz] == GO_NOTE_NAME:
            return notes[desc_at:desc_at + descsz].decode(errors="replace")
        offset = desc_at + (descsz + 3) // 4 * 4
    return None


def section(data: Any, name: str) -> tuple[int, int] | None:
    """(file offset, size) of the section called `name` in `data` (bytes, or an mmap of the file), from
    the section headers; None when there is none (or no section headers, or they do not fit in `data`)."""
    try:
        ident = _ident(data)
        if ident is None:
            return None
        order, wide = ident
        e_shoff = struct.unpack_from(order + ("Q" if wide else "I"), data, 40 if wide else 32)[0]
        e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(order + "HHH", data, 58 if wide else 46)
        entry = order + ("IIQQQQ" if wide else "IIIIII")  # name, type, flags, addr, offset, size

        def header(index: int) -> tuple[int, int, int]:
            fields = struct.unpack_from(entry, data, e_shoff + index * e_shentsize)
            return fields[0], fields[4], fields[5]

        if not e_shoff or e_shstrndx >= e_shnum:
            return None
        strings = header(e_shstrndx)[1]
        wanted = name.encode() + b"\x00"
        for index in range(e_shnum):
            name_at, offset, size = header(index)
            if data[strings + name_at:strings + name_at + len(wanted)] == wanted:
                return (offset, size) if offset + size <= len(data) else None
    except (struct.error, OverflowError):
        return None
    return None
