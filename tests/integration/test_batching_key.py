"""`build`'s batching line after a plugin edit, as a user runs it (`scheduler-build build --spec`, a whole
process, the real engine and compile): its verdict is kept per what it depends on (config/batching_key.py),
so an edit of a constant reuses it without running the new binary, and an edit that removes SignPod is
judged again by the binary (the negative control: the key must change, and the line with it).

The example spec without its reference extender (an extender decides every profile without the binary),
and with a configuration of its own (a fresh capacityLabel), so no verdict kept by an earlier run or
another test can answer for it. "The binary did not run" is observed as the kept verdict's file left as
it was: a run writes it anew (validate.batching_summary keeps each verdict the binary gives).

Cost: three compiles of the example plugin into kube-scheduler (the Go build cache volume is warm for
all but the plugin package) and one throw-away container for each verdict the binary gives (two).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

from conftest import REPO, TEST_K8S_MINOR
from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.build.info import BuildInfo
from scheduler_build.config import batching_key, render
from scheduler_build.config import validate as config_validate

PLUGIN_GO = "plugin/pkg/underlayiplimit/underlayiplimit.go"
ARGS_GO = "plugin/pkg/underlayiplimit/args.go"
SIGN_POD = re.compile(r"(?ms)^func \(pl \*UnderlayIPLimit\) SignPod\(.*?^}\n")
ASSERTION = "var _ fwk.SignPlugin = &UnderlayIPLimit{}\n"


def _spec(work: Path) -> Path:
    shutil.copytree(REPO / "examples", work / "examples")
    path = work / "examples/underlay/scheduler.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["kubernetes"]["version"] = TEST_K8S_MINOR
    raw["referenceExtender"]["enabled"] = False
    raw["profiles"][0]["pluginConfig"][0]["args"]["capacityLabel"] = f"batching-key.test/{uuid.uuid4().hex}"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def _build(spec: Path, dist: Path) -> tuple[list[str], Path]:
    """`scheduler-build build --spec` as a user types it; its batching lines and the kept verdict's file."""
    proc = subprocess.run([sys.executable, "-m", "scheduler_build", "build", "--spec", str(spec), "--dist", str(dist),
                           "--no-pull"], cwd=spec.parent, capture_output=True, text=True, timeout=1800,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    binary = Path(proc.stdout.strip())
    info = BuildInfo.from_file(binary.parent / "build-info.json")
    cache = settings.cache_dir()
    config = render.config_text(spec_mod.load(spec))
    kept = config_validate.batching_summary_path(cache, batching_key.depends_on(binary, info, cache), config)
    return [line for line in proc.stderr.splitlines() if line.startswith("batching:")], kept


def _edit(spec: Path, relative: str, change) -> None:
    path = spec.parent / relative
    text = path.read_text()
    path.write_text(change(text))
    assert path.read_text() != text


def test_a_constant_edit_reuses_the_verdict_and_removing_sign_pod_is_judged_again(tmp_path):
    spec = _spec(tmp_path)
    dist = tmp_path / "dist"
    signed = ["batching: profile underlay-scheduler: on", "batching: profile underlay-scheduler-spread: on"]

    first, kept = _build(spec, dist)
    assert first == signed and kept.is_file()  # the binary judged it, and its verdict was kept
    was = kept.stat()

    _edit(spec, ARGS_GO, lambda text: re.sub(r"DefaultCapacity int64 = \d+", "DefaultCapacity int64 = 4321", text))
    edited, kept_again = _build(spec, dist)
    assert edited == signed and kept_again == kept  # a new binary, the same key
    now = kept.stat()
    assert (now.st_ino, now.st_mtime_ns) == (was.st_ino, was.st_mtime_ns)  # not written again: the binary did not run

    # Negative control: SignPod removed (with its compile-time assertion). The key changes and the binary says
    # the plugin's profile loses batching; the other profile does not enable the plugin.
    _edit(spec, PLUGIN_GO, lambda text: SIGN_POD.sub("", text.replace(ASSERTION, "")))
    unsigned, kept_unsigned = _build(spec, dist)
    assert kept_unsigned != kept and kept_unsigned.is_file()
    assert unsigned == ["batching: profile underlay-scheduler: off (plugins without SignPod: UnderlayIPLimit)",
                        "batching: profile underlay-scheduler-spread: on"]
