"""Unit tests for the pure parts of the build: ldflags, ELF checks, stamps, atomic publish."""

import shlex
import struct
from pathlib import Path

import pytest

from scheduler_build import epoch
from scheduler_build import platforms
from scheduler_build.build import pipeline as build
from scheduler_build.build import compile as compile_stage
from scheduler_build.build import elf
from scheduler_build import atomic as fsutil
from scheduler_build.build import vendor
from scheduler_build.build import verify
from scheduler_build.errors import BuildFailed, UserError


def stamp(**kw):
    fields = dict(git_version="v1.36.3", git_major="1", git_minor="36", build_date="2026-07-22T18:07:38Z")
    fields.update(kw)
    return compile_stage.VersionStamp(**fields)


def test_ldflags_strip_and_stamp_every_version_field():
    flags = compile_stage.ldflags(stamp(git_commit="abc123"))
    words = shlex.split(flags)
    assert words[:2] == ["-s", "-w"]
    for key, value in [("gitVersion", "v1.36.3"), ("gitMajor", "1"), ("gitMinor", "36"),
                       ("gitCommit", "abc123"), ("gitTreeState", "clean"), ("buildDate", "2026-07-22T18:07:38Z")]:
        assert f"k8s.io/component-base/version.{key}={value}" in words
    assert "-linkmode" not in words


def test_ldflags_cgo_static_links_externally():
    words = shlex.split(compile_stage.ldflags(stamp(), cgo_static=True))
    assert words[-4:] == ["-linkmode", "external", "-extldflags", "-static"]


def test_build_command_and_environment_are_hermetic():
    argv = compile_stage.go_build_command(".", "/out/kube-scheduler", "-s -w")
    assert "-trimpath" in argv and "-mod=vendor" in argv
    assert argv[argv.index("-tags") + 1] == "selinux,notest"
    env = compile_stage.build_environment("linux", "arm64", False, 1700000000)
    assert env["CGO_ENABLED"] == "0" and env["GOPROXY"] == "off" and env["GOARCH"] == "arm64"
    assert env["SOURCE_DATE_EPOCH"] == "1700000000"
    # Go's package-directory index stays on: our archives give each file a content-derived mtime
    # (tests/integration/test_directory_index.py proves two trees at one path no longer collide).
    assert "GODEBUG" not in env
    assert compile_stage.build_environment("linux", "amd64", True, 0)["CGO_ENABLED"] == "1"


def test_stamped_version_suffix():
    assert build.stamped_version("v1.36.3", "") == "v1.36.3"
    assert build.stamped_version("v1.36.3", "acme.1") == "v1.36.3-acme.1"
    assert build.stamped_version("v1.37.0-rc.1", "acme.1") == "v1.37.0-rc.1.acme.1"
    for bad in ("acme 1", "acme+1", "a..b"):
        with pytest.raises(UserError):
            build.stamped_version("v1.36.3", bad)


def test_epoch_is_the_decided_value_else_the_release_time(monkeypatch):
    """The stage takes the value inputs/common.source_date_epoch decided (tests/unit/inputs/test_publish.py reads
    $SOURCE_DATE_EPOCH there) and reads the environment no more."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1000")
    assert build.resolve_epoch("", "2026-07-22T18:07:38Z") == 1784743658  # not 1000: the stage reads no environment
    assert build.resolve_epoch("42", "2026-07-22T18:07:38Z") == 42
    with pytest.raises(UserError):
        build.resolve_epoch("yesterday", "")
    assert epoch.utc_stamp(0) == "1970-01-01T00:00:00Z"


def test_component_names_are_checked():
    build.validate_component("kube-apiserver")
    for bad in ("", "../etc", "kube scheduler", "etcd"):
        with pytest.raises(UserError):
            build.validate_component(bad)


def test_elf_dynamic_host_binary():
    info = elf.inspect(Path("/bin/ls").read_bytes())
    assert info.arch == platforms.host_arch() and info.interpreter and not info.is_static


def test_elf_static_busybox():
    info = elf.inspect(Path("/bin/busybox").read_bytes())
    assert info.is_static and info.interpreter is None


def _elf64(machine: int, phdrs: list[tuple[int, bytes]]) -> bytes:
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4], header[5], header[6] = 2, 1, 1
    struct.pack_into("<HHI", header, 16, 2, machine, 1)
    struct.pack_into("<Q", header, 32, 64)  # e_phoff
    struct.pack_into("<HH", header, 54, 56, len(phdrs))
    table = bytearray()
    payload = bytearray()
    data_start = 64 + 56 * len(phdrs)
    for p_type, content in phdrs:
        entry = bytearray(56)
        struct.pack_into("<I", entry, 0, p_type)
        struct.pack_into("<QQQQ", entry, 8, data_start + len(payload), 0, 0, len(content))
        table += entry
        payload += content
    return bytes(header + table + payload)


def test_elf_arm64_with_interpreter_is_not_static():
    data = _elf64(0xB7, [(elf.PT_INTERP, b"/lib/ld-linux-aarch64.so.1\0"), (elf.PT_DYNAMIC, b"")])
    info = elf.inspect(data)
    assert info.arch == "arm64" and info.interpreter == "/lib/ld-linux-aarch64.so.1" and info.has_dynamic


def test_elf_rejects_garbage_and_truncation():
    with pytest.raises(elf.NotELF):
        elf.inspect(b"#!/bin/sh\necho hi\n" * 10)
    data = _elf64(0x3E, [(1, b"")])
    with pytest.raises(elf.NotELF):
        elf.inspect(data[:70])


def test_check_elf_refuses_dynamic_and_wrong_arch(tmp_path):
    with pytest.raises(BuildFailed, match="not statically linked"):
        verify.check_elf(Path("/bin/ls"), platforms.host_arch())
    with pytest.raises(BuildFailed, match="not the requested"):
        verify.check_elf(Path("/bin/busybox"), "arm64" if platforms.host_arch() != "arm64" else "amd64")
    script = tmp_path / "fake"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(BuildFailed, match="not a usable ELF"):
        verify.check_elf(script, "amd64")


def test_publish_dir_swaps_atomically_and_cleans_old(tmp_path):
    final = tmp_path / "dist" / "linux-amd64"
    for version, content in (("aaa", "one"), ("bbb", "two")):
        staging = tmp_path / f"stage-{version}"
        staging.mkdir()
        (staging / "kube-scheduler").write_text(content)
        (staging / "build-info.json").write_text("{}")
        fsutil.publish_dir(staging, final, version)
        assert (final / "kube-scheduler").read_text() == content
        assert not staging.exists()
    assert sorted(p.name for p in final.parent.iterdir()) == ["linux-amd64"]
    assert final.is_dir() and not final.is_symlink()  # a real directory: `tar`/`cp -r` of it get the files


def test_publish_dir_replaces_the_earlier_symlink_layout(tmp_path):
    final = tmp_path / "dist" / "linux-amd64"
    (tmp_path / "dist" / ".linux-amd64.aaa").mkdir(parents=True)
    (tmp_path / "dist" / ".linux-amd64.aaa" / "kube-scheduler").write_text("one")
    final.symlink_to(".linux-amd64.aaa")
    staging = tmp_path / "stage"
    staging.mkdir()
    (staging / "kube-scheduler").write_text("two")
    fsutil.publish_dir(staging, final)
    assert not final.is_symlink() and (final / "kube-scheduler").read_text() == "two"
    assert sorted(p.name for p in final.parent.iterdir()) == ["linux-amd64"]


def test_write_atomic_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a" / "build-info.json"
    fsutil.write_atomic(target, "{}")
    fsutil.write_atomic(target, '{"x": 1}')
    assert target.read_text() == '{"x": 1}'
    assert [p.name for p in target.parent.iterdir()] == ["build-info.json"]


def test_go_imports_parses_blocks_and_single_lines():
    source = 'package main\n\nimport "os"\nimport (\n\t"fmt"\n\tx "k8s.io/a/b" // why\n\t_ "k8s.io/c"\n)\n'
    assert vendor.go_imports(source) == {"os", "fmt", "k8s.io/a/b", "k8s.io/c"}
