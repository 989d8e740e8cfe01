"""The wrapper module's rendering kept per its inputs (build/workspace.py `cache_root`): a rebuild with the same
release, plugins and registrations (a plugin edit's) reads it back and never imports Jinja; any input or
template changed renders anew. The judge of "the same" is a fresh rendering without the cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scheduler_build.build import workspace
from scheduler_build.build.workspace import PluginImport, WrapperRegistration, render_wrapper
from scheduler_build.resolve.versions import Resolution

REPO = Path(__file__).resolve().parents[3]
RES = Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0", staging_version="v0.36.3",
                 replaces={"k8s.io/api": "v0.36.3"}, release_time="2026-01-01T00:00:00Z", supported_minors=["1.36"])
PLUGIN = (PluginImport("example.com/p/pkg/p", "p", "plugins[0]"),)
REGISTRATION = (WrapperRegistration.of("P", "p", "New", "plugins[0].register[0]"),)


def _rendered(cache: Path) -> list[Path]:
    return sorted((cache / "src" / "rendered").glob("*.json"))


def test_a_kept_rendering_is_the_rendering_and_is_read_back(tmp_path):
    fresh = render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION)
    first = render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=tmp_path)
    assert first == fresh and len(_rendered(tmp_path)) == 1
    (kept,) = _rendered(tmp_path)
    data = json.loads(kept.read_text())
    data["main.go"] += "// read back\n"  # what is kept is what is returned
    kept.write_text(json.dumps(data))
    assert render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=tmp_path).files["main.go"].endswith(
        "// read back\n")


def test_another_input_renders_anew(tmp_path):
    render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=tmp_path)
    other = Resolution(**{**RES.__dict__, "version": "v1.36.4"})
    for args in ((other, "kube-scheduler", PLUGIN, None, None, REGISTRATION),
                 (RES, "kube-scheduler", PLUGIN, {"example.com/q": "v1.0.0"}, None, REGISTRATION),
                 (RES, "kube-scheduler", PLUGIN, None, {"example.com/p": "../../plugin-modules/x"}, REGISTRATION),
                 (RES, "kube-scheduler", (), None, None, ()),
                 (RES, "kube-controller-manager", (), None, None, ())):
        assert render_wrapper(*args, cache_root=tmp_path) == render_wrapper(*args)
    assert len(_rendered(tmp_path)) == 6


def test_the_templates_text_is_part_of_the_key(tmp_path):
    context = {"component": "kube-scheduler"}
    one = workspace._rendered_path(tmp_path, {"go.mod": "wrapper/go.mod.j2"}, context)
    assert one == workspace._rendered_path(tmp_path, {"go.mod": "wrapper/go.mod.j2"}, context)
    assert one != workspace._rendered_path(tmp_path, {"go.mod": "wrapper/tools.go.j2"}, context)
    assert one != workspace._rendered_path(tmp_path, {"go.mod": "wrapper/go.mod.j2"}, {"component": "kube-proxy"})


def test_a_garbled_or_foreign_kept_file_is_rendered_again(tmp_path):
    expected = render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION)
    render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=tmp_path)
    (kept,) = _rendered(tmp_path)
    for text in ("{not json", json.dumps({"go.mod": "x"}), json.dumps(["go.mod"])):
        kept.write_text(text)
        assert render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=tmp_path) == expected
        assert json.loads(kept.read_text()) == expected.files  # and kept right again


def test_reading_a_kept_rendering_imports_no_jinja(tmp_path):
    code = ("import sys\nfrom pathlib import Path\n"
            "from test_workspace_rendered import RES, PLUGIN, REGISTRATION, render_wrapper\n"
            f"render_wrapper(RES, plugins=PLUGIN, registrations=REGISTRATION, cache_root=Path({str(tmp_path)!r}))\n"
            "print('jinja2' in sys.modules)")
    env = {"PYTHONPATH": f"{REPO}:{Path(__file__).parent}"}
    said = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)]
    assert said == ["True", "False"]  # rendered (Jinja imported), then read back (negative control first)
