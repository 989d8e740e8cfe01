"""compile.collect with the real engine: the built binary is copied out of the container unless
the seed (the last published binary) already is it, which the Go build ID in the file's first
page and its size tell, read from the start of one archive stream.

The "built binary" is a Go program of the builder image (gofmt), the other one is `go`: both
are Go binaries with build IDs, as a compile's output is. Negative controls: a seed of another
binary, a seed with the same ID but another size, and no seed at all are each replaced by the
container's file, byte for byte."""

from __future__ import annotations

import os
import shutil

import pytest

from scheduler_build import engine as engine_mod
from scheduler_build.build import builder_image, compile as compile_stage, elf


BUILT = "/usr/local/go/bin/gofmt"
OTHER = "/usr/local/go/bin/go"


@pytest.fixture(scope="module")
def box():
    engine = engine_mod.connect()
    builder = builder_image.select(engine, "1.22", pull=False)
    with engine.container(builder.image, ["true"], environment={}, workdir="/") as container:
        yield container


def _copy_of(box, path, dest):
    assert box.fetch(path, dest)
    return dest.read_bytes()


def test_no_seed_is_copied_out_whole(box, tmp_path):
    dest = tmp_path / "kube-scheduler"
    assert compile_stage.collect(box, BUILT, dest)
    data = dest.read_bytes()
    assert elf.go_build_id(data[:elf.BUILD_ID_READ]) and dest.stat().st_mode & 0o111


def test_a_seed_that_is_the_binary_is_kept(box, tmp_path):
    dest = tmp_path / "kube-scheduler"
    expected = _copy_of(box, BUILT, dest)
    dest.chmod(0o644)  # a kept seed is left exactly as it is: this mode tells it was not rewritten
    assert not compile_stage.collect(box, BUILT, dest)
    assert dest.read_bytes() == expected and dest.stat().st_mode & 0o777 == 0o644


def test_a_seed_of_another_binary_is_replaced(box, tmp_path):
    dest, built = tmp_path / "kube-scheduler", tmp_path / "built"
    _copy_of(box, OTHER, dest)
    expected = _copy_of(box, BUILT, built)
    assert compile_stage.collect(box, BUILT, dest)
    assert dest.read_bytes() == expected


def test_a_seed_with_the_same_id_but_another_size_is_replaced(box, tmp_path):
    dest, built = tmp_path / "kube-scheduler", tmp_path / "built"
    expected = _copy_of(box, BUILT, built)
    shutil.copyfile(built, dest)
    with open(dest, "ab") as seed:
        seed.write(b"tampered")
    assert compile_stage.collect(box, BUILT, dest)
    assert dest.read_bytes() == expected


def test_a_replaced_seed_never_writes_the_published_binary_it_links(box, tmp_path):
    """The seed is a hard link of the published binary (pipeline.seed): a new binary goes to a new
    file renamed over it, so the published one keeps its bytes until the new output is published."""
    published, dest = tmp_path / "published", tmp_path / "kube-scheduler"
    before = _copy_of(box, OTHER, published)
    os.link(published, dest)
    assert compile_stage.collect(box, BUILT, dest)
    assert published.read_bytes() == before and dest.read_bytes() != before
    assert dest.stat().st_ino != published.stat().st_ino and dest.stat().st_mode & 0o111
    assert not list(tmp_path.glob(".*incoming"))
