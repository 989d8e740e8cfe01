"""The compile's package count: `go list -deps` runs beside an output's first compile only."""

from __future__ import annotations

from scheduler_build.build import compile as compile_stage
from scheduler_build.progress import TOTAL_MARK


def test_without_count_the_command_is_go_build_alone_and_records_the_same_argv():
    argv = compile_stage.go_build_command(".", "/out/x", "-s -w")
    plain = compile_stage.with_progress(argv, ".", count=False)
    assert plain == ["go", "build", "-v", *argv[2:]]
    assert "go list" not in " ".join(plain)
    assert "go list -deps ." in compile_stage.with_progress(argv, ".")[2]


def test_the_total_is_counted_once_per_output_then_said_from_the_kept_file(tmp_path):
    heard: list[str] = []
    first = compile_stage.PackageTotal(tmp_path, "key", heard.append)
    assert first.start() is True and heard == []  # nothing kept: the compile counts
    first("k8s.io/foo/bar")
    first(f"{TOTAL_MARK} 1834")
    first.keep()
    assert heard == ["k8s.io/foo/bar", f"{TOTAL_MARK} 1834"]  # every line still reaches the caller
    assert (tmp_path / "key.packages").read_text() == "1834\n"

    heard.clear()
    second = compile_stage.PackageTotal(tmp_path, "key", heard.append)
    assert second.start() is False  # kept: no `go list` beside this compile
    assert heard == [f"{TOTAL_MARK} 1834"]  # the progress line still has its total
    assert compile_stage.PackageTotal(tmp_path, "other", heard.append).start() is True  # per output


def test_a_compile_that_ended_before_the_count_keeps_nothing(tmp_path):
    total = compile_stage.PackageTotal(tmp_path, "key", lambda line: None)
    total.start()
    total("k8s.io/foo/bar")
    total.keep()
    assert not (tmp_path / "key.packages").exists()
    (tmp_path / "key.packages").write_text("garbage\n")  # an unreadable record counts again
    assert compile_stage.PackageTotal(tmp_path, "key", lambda line: None).start() is True
