"""`inv bench.build --fresh-worker`'s parts that need no build: rounds, alternation, medians, module caches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import fresh_worker_bench as fwb
from bench import record, report
from scheduler_build.golang import toolchain

REPO = Path(__file__).resolve().parents[3]


def _cold(seconds: float, sha: str = "ab" * 32) -> dict:
    return {"seconds": seconds, "push_seconds": 2.0, "phases": {"compile": seconds - 5, "cache-to": 2.0},
            "modcache_bytes": 900 * 2**20, "sha256": sha, "builder_image": "scheduler-build/golang:1.26.8",
            "k8s_version": "v1.36.3", "workspace_tag": "scheduler-build/workspace:0123"}


def _fresh(seconds: float, load: float, sha: str = "ab" * 32) -> dict:
    return {"seconds": seconds, "builder_load_seconds": load, "phases": {"builder-load": load, "compile": 1.0},
            "modcache_bytes": 901 * 2**20, "sha256": sha, "engine_at_start": {"images": 0}}


def _round(cold: float, fresh: float, load: float) -> dict:
    return {"cold": _cold(cold), "fresh": _fresh(fresh, load), "registry_bytes": 10, "workspace_image_built": True,
            "cache_refs": ["r:ws-<key>", "r:gocache-<key>"]}


def test_results_are_medians_per_side_with_n_and_both_ratios():
    results = fwb.summarize([_round(100, 40, 10), _round(120, 50, 12), _round(110, 60, 8)])
    assert results["cold_seconds"] == 110 and results["fresh_worker_seconds"] == 50
    assert results["builder_load_seconds"] == 10 and results["fresh_preloaded_seconds"] == 38  # median of 30, 38, 52
    assert results["n"] == {"local cold": 3, "fresh worker": 3}
    assert results["ratio"] == round(50 / 110, 3) and results["ratio_preloaded"] == round(38 / 110, 3)
    assert results["fresh_phases"]["builder-load"] == 10
    text = fwb.markdown(results)
    assert "| end to end, builder image preloaded | 110 s | 38 s |" in text and "n=3" in text
    assert "builder image load into the empty engine | - | 10 s" in text and "builder-load 10" in text


def test_rounds_that_built_different_binaries_fail():
    other = _round(100, 40, 10)
    other["fresh"]["sha256"] = "cd" * 32
    with pytest.raises(AssertionError, match="different binaries"):
        fwb.summarize([_round(100, 40, 10), other])


class _FakeRegistry:
    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.host, self.stopped = "127.0.0.1:5999", False

    def start(self) -> _FakeRegistry:
        return self

    def stop(self) -> None:
        self.stopped = True


def test_each_round_logs_a_then_b_for_both_measures_and_the_sides_alternate(monkeypatch):
    durations = iter([(100.0, 40.0, 10.0), (120.0, 45.0, 11.0)])
    cleaned: list[tuple[str, str]] = []
    current: dict = {}

    def local_cold(request, side_dir):
        current["cold"], current["fresh"], current["load"] = next(durations)
        assert request.cache_to.endswith("/bench/sb-cache") and not request.cache_from
        return _cold(current["cold"])

    def fresh_worker(request, side_dir, builder_image, hidden):
        assert request.cache_from.endswith("/bench/sb-cache") and builder_image.startswith("scheduler-build/golang")
        return _fresh(current["fresh"], current["load"])

    monkeypatch.setattr(fwb, "Registry", _FakeRegistry)
    monkeypatch.setattr(fwb, "_local_cold", local_cold)
    monkeypatch.setattr(fwb, "_fresh_worker", fresh_worker)
    monkeypatch.setattr(fwb, "_clean_local", lambda volume, repo, tag: cleaned.append((volume, tag)))
    monkeypatch.setattr(fwb, "workspace_tags", lambda: set())
    results, raw = record.measure("bench.build.fresh-worker", lambda: fwb.run(runs=2), argv=["inv", "x"])
    runs = raw["runs"]
    assert [(r["measure"], r["side"]) for r in runs] == [
        (fwb.MEASURE, "local cold"), (fwb.PRELOADED, "local cold"), (fwb.MEASURE, "fresh worker"),
        (fwb.PRELOADED, "fresh worker")] * 2
    for measure in (fwb.MEASURE, fwb.PRELOADED):
        assert report._alternated([r for r in runs if r["measure"] == measure], ("fresh worker", "local cold"))
    assert [r["seconds"] for r in runs if r["measure"] == fwb.PRELOADED and r["side"] == "fresh worker"] == [30.0, 34.0]
    assert results["n"]["fresh worker"] == 2 and len(cleaned) == 2 and len({v for v, _ in cleaned}) == 2
    assert all(tag == "scheduler-build/workspace:0123" for _, tag in cleaned)  # built by the round: removed


def test_a_workspace_image_the_machine_had_is_left_alone(monkeypatch):
    cleaned: list[str] = []
    monkeypatch.setattr(fwb, "Registry", _FakeRegistry)
    monkeypatch.setattr(fwb, "_local_cold", lambda request, side_dir: _cold(100.0))
    monkeypatch.setattr(fwb, "_fresh_worker", lambda request, side_dir, image, hidden: _fresh(40.0, 10.0))
    monkeypatch.setattr(fwb, "_clean_local", lambda volume, repo, tag: cleaned.append(tag))
    monkeypatch.setattr(fwb, "workspace_tags", lambda: {"scheduler-build/workspace:0123"})
    results, raw = record.measure("bench.build.fresh-worker", lambda: fwb.run(runs=1), argv=["inv", "x"])
    assert cleaned == [""] and results["workspace_image_built"] == [False]
    assert raw["runs"][0]["workspace_image_built"] is False


def test_a_side_gets_an_empty_module_cache_the_host_go_uses_and_it_is_removed(tmp_path):
    before = os.environ.get("GOMODCACHE")
    with fwb.module_cache(tmp_path / "side") as cache:
        assert toolchain.module_cache() == cache and not any(cache.iterdir())
        locked = cache / "example.com" / "m@v1.0.0"
        locked.mkdir(parents=True)
        (locked / "go.mod").write_text("module example.com/m\n")
        os.chmod(locked, 0o555)  # as Go leaves its module cache
        os.chmod(locked.parent, 0o555)
    assert not cache.exists() and os.environ.get("GOMODCACHE") == before


def test_leftovers_of_other_sessions_bridges_are_not_the_engines(monkeypatch, tmp_path):
    engine = fwb.remote_engine.RemoteEngine(root=tmp_path / "sb-remote-engine-x", port=4242, process=None, hidden=())
    monkeypatch.setattr(fwb.remote_engine, "leftovers", lambda e: [
        "interface br-123", "interface docker0 was removed", "interface sbre4242", "directory /var/tmp/x"])
    assert fwb.own_leftovers(engine) == ["interface sbre4242", "directory /var/tmp/x"]


@pytest.mark.parametrize("runs", ["0", "x"])
def test_runs_below_one_is_one_line_before_anything_runs(runs):
    out = subprocess.run([sys.executable, "-m", "invoke", "bench.build", "--fresh-worker", "--runs", runs],
                         cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(f"error: --runs {runs}: must be at least 1")
