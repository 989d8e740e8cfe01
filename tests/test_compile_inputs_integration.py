"""The compile's inputs reach the container either in its environment (small: `inline_inputs`,
one archive-API round trip saved per build) or through the archive API (large), with the same
result. A tiny module compiled by compile.run in the real builder image, with the network off,
once each way; the binary comes out through the archive API and runs here.

Negative control: an archive too large for one environment variable is refused by
inline_inputs (so it goes by the archive API), and the unpacking step reports a bad archive as
its own error (exit 125), not as a compiler failure."""

from __future__ import annotations

import os
import secrets
import subprocess
import uuid

import pytest

from scheduler_build import engine as engine_mod, platforms
from scheduler_build.build import builder_image, compile as compile_stage
from scheduler_build.build.workspace_image import inputs_tar

pytestmark = pytest.mark.integration

MAIN = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("tiny", len(blob)) }\n'


def _workspace(root, blob_bytes: int):
    root.mkdir()
    (root / "go.mod").write_text("module example.com/tiny\n\ngo 1.22\n")
    (root / "main.go").write_text(MAIN)
    (root / "blob.go").write_text(f'package main\n\nconst blob = "{secrets.token_hex(blob_bytes // 2)}"\n')
    return root


@pytest.fixture(scope="module")
def engine_and_builder():
    engine = engine_mod.connect()
    volume = f"sb-test-inputs-{uuid.uuid4().hex[:8]}"
    yield engine, builder_image.select(engine, "1.22", pull=False), volume
    for name in (volume, compile_stage.out_volume(volume)):
        engine.remove_volume(name)


@pytest.mark.parametrize("blob_bytes, inline", [(64, True), (256 * 1024, False)])
def test_small_inputs_ride_in_the_environment_large_ones_by_the_archive_api(tmp_path, engine_and_builder, blob_bytes,
                                                                            inline):
    engine, builder, volume = engine_and_builder
    workspace = _workspace(tmp_path / "ws", blob_bytes)
    env = compile_stage.build_environment("linux", platforms.host_arch(), False, 0)
    assert (compile_stage.inline_inputs(["go"], env, inputs_tar(workspace, {})) is not None) is inline
    job = compile_stage.Job(workspace=workspace, vendor=tmp_path / "none", out_dir=tmp_path / "out", gocache_volume=volume,
                            package=".", binary_name="tiny", flags="-s -w", environment=env,
                            state_dir=tmp_path / "state")
    job.out_dir.mkdir()
    lines: list[str] = []
    code, argv = compile_stage.run(engine, builder.image, job, on_line=lines.append)
    assert code == 0, lines
    assert argv[:2] == ["go", "build"]  # the recorded command is the compile's own, however inputs went in
    ran = subprocess.run([str(job.out_dir / "tiny")], capture_output=True, text=True, check=True)
    assert ran.stdout.split() == ["tiny", str(blob_bytes // 2 * 2)]


def test_a_bad_inline_archive_is_its_own_error(engine_and_builder):
    engine, builder, _ = engine_and_builder
    command, env = compile_stage.inline_inputs(["go", "version"], {}, b"not a tar")
    env[compile_stage.INLINE_VARIABLE] = "bm90IGd6aXA="  # "not gzip"
    lines: list[str] = []
    code = engine.run(builder.image, command, environment=env, workdir="/", on_line=lines.append)
    assert code == compile_stage.INLINE_FAILED
    assert any("cannot unpack the compile's inputs" in line for line in lines), lines
    assert not any(line.startswith("go version") for line in lines)


def test_inputs_too_large_for_one_variable_are_refused():
    big = os.urandom(compile_stage.INLINE_LIMIT)  # incompressible: larger once encoded
    assert compile_stage.inline_inputs(["go"], {}, big) is None
    small = compile_stage.inline_inputs(["go", "build"], {"A": "1"}, b"x" * 10_000)
    assert small is not None and small[0][-2:] == ["go", "build"] and small[1]["A"] == "1"
