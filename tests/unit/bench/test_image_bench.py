"""`inv bench.image`'s order: the forced build and `docker build` alternate, so their row renders."""

from __future__ import annotations

from bench import image_bench, report


def _runs(steps: list[str]) -> list[dict]:
    return [{"measure": image_bench.STEPS[s][0], "side": image_bench.STEPS[s][1], "ended_s": float(i)}
            for i, s in enumerate(steps)]


def test_forced_and_docker_build_alternate_round_by_round():
    order = image_bench.build_order(3)
    assert order[:4] == ["cold", "warm", "forced", "docker_build"] and len(order) == 12
    forced = [r for r in _runs(order) if r["measure"] == "image build forced"]
    assert [r["side"] for r in forced] == ["ours", "docker build"] * 3
    assert report._alternated(forced, ("ours", "docker build"))
    # Negative control: the former order (every round of ours, then every docker build) is refused.
    before = [s for s in order if s != "docker_build"] + ["docker_build"] * 3
    forced = [r for r in _runs(before) if r["measure"] == "image build forced"]
    assert not report._alternated(forced, ("ours", "docker build"))


def test_cold_comes_first_in_each_round_so_docker_build_has_a_layout_to_read():
    order = image_bench.build_order(2)
    assert all(order[i] == "cold" for i in range(0, len(order), 4))
    assert order.index("cold") < order.index("docker_build")


def test_a_cold_round_removes_the_published_layout_directory_or_an_earlier_link(tmp_path):
    layout = tmp_path / "image"
    (layout / "blobs").mkdir(parents=True)  # atomic.publish_dir's real directory
    image_bench._remove_layout(layout)
    assert not layout.exists()
    (tmp_path / ".image.abc" / "blobs").mkdir(parents=True)  # the earlier layout: a link to a hidden sibling
    layout.symlink_to(tmp_path / ".image.abc")
    image_bench._remove_layout(layout)
    assert not layout.exists() and not layout.is_symlink() and not (tmp_path / ".image.abc").exists()
    image_bench._remove_layout(layout)  # nothing there: nothing to do
