"""Integration tests beside tests/unit/resolve/test_vocabulary.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: Vocabularies derived from the target release's own source (resolve.vocabulary, config.api_fields).
"""

from __future__ import annotations
import os
import subprocess
from pathlib import Path
import pytest
import yaml
from scheduler_build.golang import gotool
from scheduler_build import spec as spec_mod
from scheduler_build.config import api_fields
from scheduler_build.config import validate as config_validate
from scheduler_build.resolve import vocabulary
from scheduler_build.spec import SpecError
from tests.unit.resolve.test_vocabulary import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    new_minor_proxy, spec_with,
)


def test_pod_group_post_filter_is_accepted_for_137_and_refused_for_136_naming_137(tmp_path):
    spec = spec_with(tmp_path, {"podGroupPostFilter": {"disabled": [{"name": "*"}]}})
    cache = tmp_path / "cache"
    config_validate.check_config_api(spec, "v1.37.2", cache)
    with pytest.raises(SpecError) as info:
        config_validate.check_config_api(spec, "v1.36.3", cache)
    assert "introduced in 1.37" in str(info.value) and len(str(info.value).splitlines()) == 1
    assert "podGroupPostFilter" not in vocabulary.config_api("v1.36.3", cache).extension_points
    # cached per version: the second read needs no download
    assert vocabulary.cached_config_api("v1.37.2", cache).extension_points[-1] == "podGroupPostFilter"


def test_a_new_minor_needs_no_code_change(tmp_path, new_minor_proxy):
    spec = spec_with(tmp_path, {"gangPermit": {"enabled": [{"name": "Gang"}]}})
    cache = tmp_path / "cache"
    assert "gangPermit" in vocabulary.config_api("v1.99.0", cache).extension_points
    config_validate.check_config_api(spec, "v1.99.0", cache)  # accepted for that version
    with pytest.raises(SpecError) as info:
        config_validate.check_config_api(spec, "v1.98.0", cache)
    assert info.value.paths == ["profiles[0].plugins.gangPermit"]
    assert "introduced in 1.99" in str(info.value)
    assert os.environ["GOPROXY"].startswith("file://")


def test_the_readme_version_table_is_what_the_proxy_serves(tmp_path):
    from scheduler_build import settings
    from scheduler_build.resolve import version_table

    readme = Path(__file__).resolve().parents[2] / "docs" / "build.md"  # the table lives on the build page
    block = version_table.markdown(version_table.rows(settings.cache_dir()))
    assert block in readme.read_text(), "regenerate: python -m scheduler_build.resolve.version_table --update docs/build.md"
    # the generator rewrites only its block, and a stale block is noticed
    copy = tmp_path / "README.md"
    copy.write_text(f"before\n{version_table.BEGIN}\n| 1.0 | v1.0.0 |\n{version_table.END}\nafter\n")
    assert version_table.update(copy, block) is True and copy.read_text() == f"before\n{block}\nafter\n"
    assert version_table.update(copy, block) is False


def test_the_example_spec_validates_against_every_served_minor_its_plugin_supports():
    """Field by field (the configuration API and in-tree names of each minor's own source): every served
    minor from the one the example plugin's go.mod was written for. A binary per minor is not built here."""
    import json
    import subprocess
    import sys

    from scheduler_build.build import k8s_agreement
    from scheduler_build.resolve import gomod

    repo = Path(__file__).resolve().parents[2]
    listed = subprocess.run([sys.executable, "-m", "invoke", "k8s.versions", "--json"], cwd=repo,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr[-2000:]
    served = json.loads(listed.stdout)
    plugin_mod = gomod.parse((repo / "examples" / "underlay" / "plugin" / "go.mod").read_text())
    written_for = k8s_agreement.as_kubernetes("k8s.io/kubernetes", plugin_mod.requires["k8s.io/kubernetes"])[0]
    supported = [m for m in served if int(m.split(".")[1]) >= written_for]
    assert supported, served
    for minor in supported:
        got = subprocess.run([sys.executable, "-m", "invoke", "config.validate", "--spec",
                              str(repo / "examples" / "underlay" / "scheduler.yaml"), "--fields-only",
                              "--k8s-version", served[minor]], cwd=repo, capture_output=True, text=True)
        assert got.returncode == 0, f"{minor}: {got.stderr[-2000:]}"
        assert f"plugins of Kubernetes {served[minor]}" in got.stdout
