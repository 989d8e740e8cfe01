"""One settings layer that validates (issue 22, examples 2 and 5): booleans read strictly from files and
the environment, every boolean setting turned off by a flag, unknown keys with a "did you mean", wrong
types as one line naming the file and key, scheduler-build.yaml found by walking up, invoke.yaml still
read with a deprecation line, and a foreign ~/.invoke.yaml never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build import settings
from scheduler_build.settings import options
from scheduler_build.errors import UserError
from scheduler_build.commands import namespace
from testkit.invoke_tasks import walk

REPO = Path(__file__).resolve().parents[3]
SPEC = str(REPO / "examples" / "underlay" / "scheduler.yaml")
# config.validate against a binary that is not there: "no kube-scheduler at" proves the real-binary
# check ran; "ok:" proves it was skipped (--fields-only). Neither needs Docker or the network.
VALIDATE = ["config.validate", "--spec", SPEC, "--binary", "/nonexistent/kube-scheduler"]
SCAFFOLD_PLAN = ["scaffold.plugin", "--name", "A", "--points", "filter", "--module", "example.com/a", "--out", "x",
                 "--dry-run"]


def sb(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    full = {k: v for k, v in full.items() if not k.startswith("SCHEDULER_BUILD_") or k in env}
    return subprocess.run([sys.executable, "-m", "scheduler_build", *argv], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=300)


def one_line(proc: subprocess.CompletedProcess, substring: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and substring in errors[0], proc.stderr[-2000:]


@pytest.mark.parametrize("word, expected", [("false", False), ("no", False), ("off", False), ("0", False), ("OFF", False),
                                            ("true", True), ("yes", True), ("on", True), ("1", True), (" True ", True)])
def test_boolean_words(word, expected):
    assert options.boolean(word, "x") is expected


@pytest.mark.parametrize("word", ["", "maybe", "2", "nein", "-1"])
def test_other_words_are_not_booleans(word):
    with pytest.raises(UserError, match="not a boolean; use true or false"):
        options.boolean(word, "environment variable X")


@pytest.mark.parametrize("value", ["false", "no", "off", "0"])
def test_false_in_the_environment_is_false(tmp_path, value):
    """Was: SCHEDULER_BUILD_CONFIG_FIELDS_ONLY=false skipped the real-binary check and printed ok."""
    proc = sb(VALIDATE, tmp_path, SCHEDULER_BUILD_CONFIG_FIELDS_ONLY=value)
    one_line(proc, "no kube-scheduler at /nonexistent/kube-scheduler")


def test_true_in_the_environment_is_true(tmp_path):
    proc = sb(VALIDATE, tmp_path, SCHEDULER_BUILD_CONFIG_FIELDS_ONLY="yes")
    assert proc.returncode == 0 and proc.stdout.startswith("ok:"), proc.stderr[-2000:]


def test_a_quoted_no_in_the_settings_file_is_false(tmp_path):
    (tmp_path / "scheduler-build.yaml").write_text('config:\n  fields_only: "no"\n')
    one_line(sb(VALIDATE, tmp_path), "no kube-scheduler at")


def test_an_unknown_boolean_word_names_the_variable(tmp_path):
    proc = sb(["k8s.versions"], tmp_path, SCHEDULER_BUILD_PUSH_INSECURE="maybe")
    one_line(proc, "environment variable SCHEDULER_BUILD_PUSH_INSECURE 'maybe': not a boolean")


def test_a_flag_turns_off_what_the_file_turns_on(tmp_path):
    (tmp_path / "scheduler-build.yaml").write_text("config:\n  fields_only: true\n")
    assert sb(VALIDATE, tmp_path).returncode == 0
    one_line(sb(VALIDATE + ["--no-fields-only"], tmp_path), "no kube-scheduler at")
    one_line(sb(VALIDATE + ["--fields-only", "--no-fields-only"], tmp_path), "contradict")




def test_every_boolean_flag_of_a_boolean_setting_has_its_inverse():
    flags = {key.rsplit(".", 1)[1] for key, value in settings.leaves() if isinstance(value, bool)} | {"no_pull"}
    seen = set()
    for name, task in walk(namespace()):
        names = {arg.name for arg in task.get_arguments()}
        for flag in flags & names:
            inverse = flag[3:] if flag.startswith("no_") else f"no_{flag}"
            assert inverse in names, (name, flag)
            seen.add(flag)
    # Every boolean setting with a flag somewhere: its flag has an inverse (reuse_builder has no flag).
    assert seen >= {"force", "insecure", "fields_only", "cgo_static", "all_platforms", "no_wait", "no_pull"}


@pytest.mark.parametrize("text, substring", [
    ("spec: my.yaml\n", "scheduler-build.yaml: spec: 'my.yaml' where the section spec is meant; "
                        "write `spec: {path: my.yaml}`"),
    ("paths:\n  dist_dir: true\n", "scheduler-build.yaml: paths.dist_dir true: a boolean where a text or path is meant"),
    ("config:\n  outt: x\n", "scheduler-build.yaml: unknown setting config.outt; did you mean config.out?"),
    ("confg:\n  out: x\n", "scheduler-build.yaml: unknown section 'confg'; did you mean config?"),
    ("push:\n  retries: many\n", "scheduler-build.yaml: push.retries 'many': not a whole number"),
], ids=["spec: my.yaml", "dist_dir: true", "key typo", "section typo", "not a number"])
def test_a_settings_file_mistake_is_one_line_naming_file_and_key(tmp_path, text, substring):
    (tmp_path / "scheduler-build.yaml").write_text(text)
    one_line(sb(["k8s.versions"], tmp_path), substring)


def test_the_settings_file_is_found_walking_up(tmp_path):
    (tmp_path / "scheduler-build.yaml").write_text('k8s:\n  version: "1.34"\n')
    (tmp_path / "a" / "b").mkdir(parents=True)
    proc = sb(SCAFFOLD_PLAN, tmp_path / "a" / "b")
    assert proc.returncode == 0 and "for Kubernetes 1.34" in proc.stderr, proc.stderr[-2000:]
    assert "warning" not in proc.stderr


def test_invoke_yaml_is_still_read_with_a_deprecation_line(tmp_path):
    (tmp_path / "invoke.yaml").write_text('k8s:\n  version: "1.35"\n')
    proc = sb(SCAFFOLD_PLAN, tmp_path)
    assert proc.returncode == 0 and "for Kubernetes 1.35" in proc.stderr, proc.stderr[-2000:]
    assert f"warning: {tmp_path / 'invoke.yaml'}: scheduler-build reads scheduler-build.yaml now" in proc.stderr


def test_a_foreign_user_invoke_yaml(tmp_path):
    """~/.invoke.yaml written for another invoke-based tool: scheduler-build does not read it; `inv`
    says in one line which file and key clash with its settings."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".invoke.yaml").write_text("image: myorg/app\ndocker: {host: x}\n")
    proc = sb(SCAFFOLD_PLAN, tmp_path, HOME=str(home))
    assert proc.returncode == 0, proc.stderr[-2000:]
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run(["inv", "k8s.versions"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    one_line(proc, f"{home / '.invoke.yaml'}: image: 'myorg/app' where the section image is meant "
                   "(is this file another invoke-based tool's?)")


# --- Every task's --help of a setting-backed flag comes from the settings table (settings.flag_help) ---

# Flags named like a setting's flag that have no setting behind them, each with why: the walk below
# fails on an entry that no longer exists, so this list cannot go stale silently.
FLAG_ONLY = {
    ("snapshot.take", "kubeconfig"): "the cluster to read, else the local control plane's (dev.run's rule)",
    ("snapshot.take", "out"): "the snapshot file",
    ("snapshot.generate", "out"): "the snapshot file",
    ("bench.compare", "spec"): "the spec compared against itself, the example by default",
    ("bench.perf", "timeout"): "with --on: how long the Job may run, not a deploy or cluster wait",
    ("bench.compare", "apiserver"): "passed to compare's --apiserver",
    ("doctor", "kubeconfig"): "a cluster to judge, only when given",
    ("init", "name"): "the new spec's name, not build.name",
    ("init", "force"): "replaces an existing scheduler.yaml",
    ("k8s.resolve", "version"): "the version to resolve (positional), not image.version",
    ("builder.bootstrap", "force"): "rebuilds the builder image",
    ("build.check-patches", "k8s-version"): "flag > the spec's (a spec is required: no setting is read)",
    ("cluster.load", "spec"): "loads a spec's images only when given",
    ("image.extender", "force"): "rebuilds the extender image",
    ("image.keygen", "out"): "the key pair's directory",
    ("image.policy", "out"): "the policy file",
    ("scaffold.plugin", "name"): "the plugin's Go name",
    ("scaffold.plugin", "out"): "the new module's directory",
    ("config.render", "k8s-version"): "flag > the spec's (a spec is required: no setting is read)",
    ("config.render", "force"): "--plain's replacement of foreign files",
    ("config.chart", "out"): "the chart's directory",
    ("config.chart", "k8s-version"): "flag > the spec's (a spec is required: no setting is read)",
    ("config.chart", "force"): "replacement of foreign files",
    ("config.validate", "k8s-version"): "flag > the spec's (a spec is required: no setting is read)",
    ("config.migrate-policy", "policy"): "the legacy Policy file (positional)",
    ("config.migrate-policy", "out"): "the migrated file",
    ("dev.run", "kubeconfig"): "a cluster instead of the local control plane, only when given",
    ("release.step-image", "tag"): "the CI step image's tag",
    ("release.step-image", "force"): "rebuilds the CI step image",
    ("bench.merge", "out"): "the merged raw file",
}
# Where two settings share a flag name and the task's collection does not pick one.
PREFERRED = {"k8s-version": "k8s.version", "kubeconfig": "deploy.kubeconfig", "key": "sign.key",
             "registry": "registry.url", "force": "image.force"}
CHOSEN = {("image.verify", "key"): "sign.public_key", ("compare", "timeout"): "cluster.timeout"}


def setting_behind(task: str, flag: str) -> str | None:
    """The setting a task's flag overrides, from the table's flag names (deprecated aliases never)."""
    rows = [r for r in settings.SETTINGS if r.flag_name == f"--{flag}" and r.key not in settings.ALIASES]
    if not rows or (task, flag) in FLAG_ONLY:
        return None
    if (task, flag) in CHOSEN:
        return CHOSEN[(task, flag)]
    same = [r.key for r in rows if r.key.split(".")[0] == task.split(".")[0]]
    return same[0] if same else rows[0].key if len(rows) == 1 else PREFERRED[flag]


def help_differs(key: str, text: str) -> str | None:
    """Why a flag's help is not its setting's row (None: it is): the row's help, then its default."""
    row = settings.setting(key)
    if row.help not in text:
        return f"does not carry the row's help {row.help!r}"
    tail = text[text.rfind("(default: "):] if "(default: " in text else ""
    if not (tail.endswith(")") and re.search(rf"\bdefault: (the spec's [^,]+, else )?{re.escape(key)}\b", tail)):
        return f"does not end with the row's default ({settings.describe(key)})"
    return None


HELP_DUMP = ("import json, tasks; from testkit.invoke_tasks import walk; "
             "print(json.dumps({n: dict(t.help) for n, t in walk(tasks.ns)}))")


def test_every_setting_backed_flag_takes_its_help_from_the_table():
    """Walk the whole namespace (product and developer tasks; in a fresh interpreter: invoke pops help texts
    when a program parses a task) and hold every flag a setting stands behind to its row."""
    proc = subprocess.run([sys.executable, "-c", HELP_DUMP], cwd=REPO, capture_output=True, text=True, check=True)
    helps = json.loads(proc.stdout)
    wrong, checked, exempt = [], 0, set()
    for task, flags in helps.items():
        for flag, text in flags.items():
            if (task, flag) in FLAG_ONLY:
                exempt.add((task, flag))
            key = setting_behind(task, flag)
            if key is None:
                continue
            checked += 1
            if (why := help_differs(key, text)) is not None:
                wrong.append(f"{task} --{flag} ({key}): {why}")
    assert wrong == [], "\n".join(wrong)
    assert set(FLAG_ONLY) - exempt == set(), "FLAG_ONLY names flags that no longer exist"
    assert checked > 80


def test_a_hand_written_help_is_caught():
    """Negative controls: a restated text, a stale default and another setting's default all differ."""
    assert help_differs("deploy.timeout", settings.flag_help("deploy.timeout")) is None
    assert help_differs("build.name", settings.flag_help("build.name", spec="name", after="; also X")) is None
    assert help_differs("deploy.timeout", "seconds to wait (default: deploy.timeout = 300)") is not None
    assert help_differs("deploy.timeout", settings.setting("deploy.timeout").help + " (default: 300)") is not None
    assert help_differs("deploy.timeout", settings.setting("deploy.timeout").help + " (default: cluster.timeout)") \
        is not None
    assert setting_behind("cluster.up", "timeout") == "cluster.timeout"
    assert setting_behind("deploy.deploy", "timeout") == "deploy.timeout"
    assert setting_behind("image.verify", "key") == "sign.public_key"
