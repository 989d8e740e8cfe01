"""The recorder patch applies to the real source of every served minor the suite builds (in memory)."""

from __future__ import annotations

import pytest

from scheduler_build import settings
from scheduler_build.build import debuggable, patches
from scheduler_build.resolve import versions

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("minor", ["1.36", "1.37"])
def test_the_recorder_applies_to_the_served_minor(minor, tmp_path):
    resolution = versions.resolve(minor, settings.cache_dir())
    applied = patches.apply_series([debuggable.recorder_patch(tmp_path)], resolution)
    framework = applied.changes[("k8s.io/kubernetes", f"{debuggable.RUNTIME_DIR}/framework.go")]
    # One call, right after the framework's own wrapping, inside NewFramework.
    assert framework.count("f.setRecordedPlugins()") == 1
    assert "\tf.setInstrumentedPlugins()\n\tf.setRecordedPlugins()\n\treturn f, nil\n" in framework
    assert "type frameworkImpl struct" in framework and "scorePluginWeight" in framework
