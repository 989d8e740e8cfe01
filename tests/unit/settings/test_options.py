"""The task layer's one pattern: option resolution, deprecated aliases, help defaults, JSON results."""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from invoke import Config, Context

from scheduler_build import settings
from scheduler_build.errors import UserError
from scheduler_build.extender.service import ServeConfig, settings_defaults
from scheduler_build.extender.cli import parser as extender_parser
from scheduler_build.commands import namespace
from scheduler_build.commands._common import emit_json, option
from testkit.invoke_tasks import walk

REPO = Path(__file__).resolve().parents[3]


def context(**overrides) -> Context:
    config = Config(defaults=settings.DEFAULTS, overrides=overrides)
    return Context(config=config)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(settings, "_warned", set())


def test_option_flag_then_config_then_default():
    c = context(deploy={"timeout": 60})
    assert option(c, "deploy.timeout", "90") == 90  # a flag wins, cast to the default's type
    assert option(c, "deploy.timeout") == 60  # then invoke config
    assert option(context(), "deploy.timeout") == settings.default("deploy.timeout")  # then the table
    assert option(c.config, "deploy.timeout") == 60  # a bare config works too


def test_booleans_resolve_one_way():
    assert option(context(), "image.force", False) is False  # absent flag, default off
    assert option(context(), "image.force", True) is True  # --force
    assert option(context(image={"force": True}), "image.force", False) is True  # config turns it on
    assert option(context(deploy={"no_wait": 1}), "deploy.no_wait", False) is True


def test_option_names_the_setting_of_a_bad_number():
    with pytest.raises(UserError, match=r"--retries 'x': not a whole number"):
        option(context(), "push.retries", "x")
    with pytest.raises(UserError, match=r"setting push.retries \(invoke.yaml, INVOKE_PUSH_RETRIES .*'x': not a whole"):
        option(context(push={"retries": "x"}), "push.retries")
    assert option(context(), "push.backoff", "2") == 2.0


def test_spec_path_is_one_key_with_deprecated_aliases(capsys):
    default = settings.default("spec.path")
    assert option(context(), "spec.path") == str(Path.cwd() / default)  # settings' paths: the project dir
    assert option(context(), "spec.path", "x.yaml") == "x.yaml"  # a flag's: the current directory
    assert option(context(buildspec={"path": "a.yaml"}), "spec.path") == str(Path.cwd() / "a.yaml")
    assert "buildspec.path is deprecated, use spec.path" in capsys.readouterr().err
    assert option(context(config={"spec": "b.yaml"}), "spec.path") == str(Path.cwd() / "b.yaml")
    assert "config.spec is deprecated, use spec.path" in capsys.readouterr().err
    # Two keys that name different specs can no longer silently disagree.
    with pytest.raises(UserError, match="conflicting settings: buildspec.path='a.yaml', config.spec='b.yaml'"):
        option(context(buildspec={"path": "a.yaml"}, config={"spec": "b.yaml"}), "spec.path")
    with pytest.raises(UserError, match="set only spec.path"):
        option(context(spec={"path": "c.yaml"}, config={"spec": "b.yaml"}), "spec.path")
    # Agreeing keys are fine; a flag wins over all of them.
    assert option(context(spec={"path": "c.yaml"}, config={"spec": "c.yaml"}), "spec.path") == str(Path.cwd() / "c.yaml")
    assert option(context(config={"spec": "b.yaml"}), "spec.path", "flag.yaml") == "flag.yaml"
    assert option(context(buildspec={"all_platforms": True}), "build.all_platforms") is True


def test_describe_reads_the_table():
    assert settings.describe("deploy.timeout") == f"default: deploy.timeout = {settings.default('deploy.timeout')}"
    assert settings.describe("extender.max_body_bytes") == "default: extender.max_body_bytes = 64 MiB"
    assert settings.describe("image.force") == "default: image.force = off"
    assert settings.describe("deploy.kubeconfig", "$KUBECONFIG") == "default: deploy.kubeconfig, else $KUBECONFIG"




# In a fresh interpreter: invoke pops a task's help texts when a Program parses it.
HELP_DUMP = """
import json, tasks
def walk(col, prefix=""):
    for name, task in col.tasks.items():
        yield prefix + name, dict(task.help)
    for name, sub in col.collections.items():
        yield from walk(sub, prefix + name + ".")
print(json.dumps(dict(walk(tasks.ns))))
"""


def test_help_defaults_come_from_the_settings_table():
    """Every `default: key = value` in a help text names a real setting and its current default."""
    proc = subprocess.run([sys.executable, "-c", HELP_DUMP], cwd=REPO, capture_output=True, text=True, check=True)
    seen = 0
    for name, helps in json.loads(proc.stdout).items():
        for flag, text in helps.items():
            for key, value in re.findall(r"default: ([a-z0-9_]+\.[a-z0-9_]+)(?: = ([^),;]+))?", text):
                if key.split(".")[0] not in settings.DEFAULTS:
                    continue  # e.g. "policy.cfg", a file name
                seen += 1
                assert settings.default(key) is not None, f"{name} --{flag}: unknown setting {key}"
                if value:
                    assert value.strip() == settings.describe(key).split(" = ", 1)[1], f"{name} --{flag}: {text}"
            assert "buildspec." not in text and "config.spec" not in text, f"{name} --{flag} names a deprecated key"
    assert seen > 40


def test_extender_defaults_have_one_home():
    assert settings.DEFAULTS["extender"] == settings_defaults()
    args = extender_parser().parse_args([])
    d = ServeConfig()
    assert (args.host, args.port, args.policy, args.url_prefix, args.max_body_bytes, args.assume_ttl, args.log_level) == \
        (d.host, d.port, d.policy, d.url_prefix, d.max_body_bytes, d.assume_ttl, d.log_level)
    assert {v: getattr(args, f"{v}_verb") for v in d.verbs} == d.verbs


def test_extender_console_script_needs_neither_invoke_nor_the_product():
    code = ("import sys; from scheduler_build.extender.cli import parser; parser().parse_args([]); "
            "bad = [m for m in sys.modules if m == 'invoke' or (m.startswith('scheduler_build.') and "
            "m not in ('scheduler_build.extender', 'scheduler_build.errors', 'scheduler_build.cli', 'scheduler_build.cli.about') "
            "and not m.startswith('scheduler_build.extender.'))]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def kubernetes_version_literals(paths: list[Path]) -> list[str]:
    """String literals (not comments, not prose in docstrings) that are a Kubernetes version: "1.36", "v1.36.2"."""
    pattern = re.compile(r"^v?1\.[34]\d(\.\d+)?$")  # a served minor (1.3x, 1.4x); tools' own pins (v1.20.0) differ
    hits = []
    for path in paths:
        for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if token.type == tokenize.STRING and pattern.match(token.string.strip("\"'")):
                hits.append(f"{path.relative_to(REPO)}:{token.start[0]}: {token.string}")
    return hits


def test_kubernetes_minor_has_one_home():
    """The default minor lives in settings.py only: the whole package, bench/ and tasks.py are searched."""
    paths = [p for p in sorted((REPO / "scheduler_build").rglob("*.py")) if p.relative_to(REPO).as_posix() != "scheduler_build/settings/__init__.py"]
    paths += sorted((REPO / "bench").rglob("*.py")) + [REPO / "tasks.py"]
    assert kubernetes_version_literals(paths) == []


def test_the_literal_version_guard_catches_a_planted_literal(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""Prose about 1.36 is fine."""\nK8S = "1.36"  # but not this\nOTHER = "v1.15.0"  # a tool pin\n')
    original = REPO
    try:
        globals()["REPO"] = tmp_path
        assert kubernetes_version_literals([planted]) == ['planted.py:2: "1.36"']
    finally:
        globals()["REPO"] = original


def test_emit_json_is_one_sorted_document(capsys):
    emit_json({"b": 1, "a": [1, 2]})
    out = capsys.readouterr().out
    assert json.loads(out) == {"a": [1, 2], "b": 1} and out.index('"a"') < out.index('"b"') and out.endswith("\n")


def test_task_modules_import_at_the_top_and_not_each_other():
    for path in sorted((REPO / "scheduler_build" / "commands").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                # A task function may import its stage (pointing down, for a fast start), nothing else.
                local = [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
                for imp in local:
                    module = imp.module if isinstance(imp, ast.ImportFrom) else imp.names[0].name
                    assert module.startswith("scheduler_build.") and not module.startswith("scheduler_build.commands"), \
                        f"{path.name}:{imp.lineno} {node.name} imports {module} inside a function"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scheduler_build.commands."):
                assert node.module == "scheduler_build.commands._common", f"{path.name} imports {node.module}"


def test_product_namespace_has_no_developer_tasks():
    names = {name for name, _ in walk(namespace())}
    assert {"build.build", "k8s.resolve", "config.render", "deploy.deploy", "extender.serve"} <= names
    assert not names & {"test", "e2e.e2e"} and not any(n.startswith("bench.") for n in names)


def _readme_misses(readme: str, names: list[str]) -> list[str]:
    """Tasks the README never shows as a command a user can type (`scheduler-build TASK` or `inv TASK`)."""
    return [name for name in names if not re.search(rf"(?:scheduler-build|inv) {re.escape(name)}(?![\w.-])", readme)]


def test_readme_names_every_task_as_a_command():
    import tasks  # the checkout's collection: the product's tasks plus the developer ones

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    # A collection's default task is typed by the collection's name (`scheduler-build build`).
    names = sorted({name.rsplit(".", 1)[0] if name.count(".") == 1 and len(set(name.split("."))) == 1 else name
                    for name, _ in walk(tasks.ns)})
    assert _readme_misses(readme, names) == []
    # Negative control: a task named only bare, in backticks, is not findable by its command.
    assert _readme_misses("| `scaffold.plugin` | ... |\nscheduler-build scaffold.plugins", ["scaffold.plugin"]) == ["scaffold.plugin"]
