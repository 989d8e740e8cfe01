"""The settings reference (docs/settings.md) is generated from settings.DEFAULTS: every key documented with
its default and both environment variables, and those variables really reach the setting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from invoke import Config

from scheduler_build import settings
from scheduler_build.cli.app import SchedulerBuildConfig

README = Path(__file__).resolve().parents[3] / "docs" / "settings.md"  # the generated settings reference
ROW = re.compile(r"^\| `([\w.]+)` \| (.*?) \| .* \| `(\w+)` \| `(\w+)` \|$")


def documented() -> dict[str, tuple[str, str, str]]:
    text = README.read_text()
    block = text[text.index(settings.REFERENCE_BEGIN):text.index(settings.REFERENCE_END)]
    return {m.group(1): m.group(2, 3, 4) for m in map(ROW.match, block.splitlines()) if m}


def test_every_key_is_documented_with_its_default_and_env_vars():
    docs = documented()
    keys = [key for key, _ in settings.leaves()]
    assert sorted(docs) == sorted(keys), "regenerate: python -m scheduler_build.settings --update docs/settings.md"
    for key, value in settings.leaves():
        default, inv_var, sb_var = docs[key]
        assert default == settings._shown(value), f"{key}: README says {default}, DEFAULTS {value!r}"
        assert (inv_var, sb_var) == settings.env_vars(key)


def test_the_generated_block_is_current():
    text = README.read_text()
    assert settings.reference_markdown() in text, "regenerate: python -m scheduler_build.settings --update docs/settings.md"


def test_update_readme_rewrites_only_the_block(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(f"before\n{settings.REFERENCE_BEGIN}\nold | rows\n{settings.REFERENCE_END}\nafter\n")
    assert settings.update_readme(path) is True
    assert path.read_text() == f"before\n{settings.reference_markdown()}\nafter\n"
    assert settings.update_readme(path) is False


@pytest.mark.parametrize("key, raw, expected", [
    ("build.gocache_volume", "my-cache", "my-cache"),
    ("paths.cache_dir", "/srv/cache", "/srv/cache"),
    ("extender.max_body_bytes", "1024", "1024"),
    ("k8s.version", "1.35", "1.35"),
])
@pytest.mark.parametrize("config_class", [Config, SchedulerBuildConfig], ids=["inv", "scheduler-build"])
def test_documented_env_vars_reach_the_setting(monkeypatch, config_class, key, raw, expected):
    inv_var, sb_var = settings.env_vars(key)
    monkeypatch.setenv(inv_var if config_class is Config else sb_var, raw)
    config = config_class(defaults=settings.DEFAULTS, lazy=True)
    config.load_shell_env()
    assert str(settings.get(config, key)) == expected
