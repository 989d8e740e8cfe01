"""The command-line front door: errors are one line, no traceback; config layering."""

import os
import subprocess

from invoke import Config

from scheduler_build import settings
from scheduler_build.cli.app import SchedulerBuildConfig
from testkit.invoke_tasks import walk


def run(args, env=None, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **(env or {})), cwd=cwd, timeout=120)


def test_malformed_version_is_one_line_without_traceback(repo):
    proc = run(["inv", "k8s.resolve", "v1.36.x"], cwd=repo)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "'v1.36.x'" in proc.stderr


def test_unreachable_proxy_is_a_clear_error(repo):
    proc = run(["inv", "k8s.resolve", "1.36"], env={"GOPROXY": "http://127.0.0.1:9", "GOFLAGS": "-mod=mod"}, cwd=repo)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "Go module proxy" in proc.stderr and "GOPROXY" in proc.stderr


def _task_names(listing: str) -> set[str]:
    """Task names of an invoke --list: lines indented by exactly two spaces."""
    return {line.split()[0] for line in listing.splitlines() if line.startswith("  ") and not line.startswith("   ")}


PRODUCT = {"doctor", "clean", "init", "explain", "build.build", "build.check-patches", "dev.run", "builder.bootstrap", "builder.show", "cluster.up",
           "cluster.down", "cluster.status", "cluster.load", "config.render", "config.chart", "config.validate", "config.migrate-policy",
           "deploy.deploy", "extender.serve", "image.build", "image.push", "image.extender", "image.keygen",
           "image.verify", "image.policy", "k8s.resolve", "release.matrix", "release.step-image",
           "k8s.versions", "scaffold.plugin", "plugin.retarget", "compare", "snapshot.take", "snapshot.generate"}
DEVELOPER = {"test", "bump-test-versions", "e2e.e2e", "bench.build", "bench.e2e", "bench.extender", "bench.image", "bench.merge", "bench.perf",
             "bench.report", "bench.startup", "bench.compare"}


def test_console_script_lists_the_products_tasks_only(capsys, tmp_path, monkeypatch):
    from scheduler_build.cli.app import program

    monkeypatch.chdir(tmp_path)  # outside the checkout, as a pip user runs it
    program.run(["scheduler-build", "--list"], exit=False)
    assert _task_names(capsys.readouterr().out) == PRODUCT | {"help", "version"}


def test_inv_in_the_checkout_lists_every_task(repo):
    proc = run(["inv", "--list"], cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert _task_names(proc.stdout) == PRODUCT | DEVELOPER


def test_settings_flag_then_config_then_default(tmp_path, monkeypatch):
    (tmp_path / "invoke.yaml").write_text("k8s:\n  version: '1.35'\nbuild:\n  arch: arm64\n")
    monkeypatch.setenv("SCHEDULER_BUILD_BUILD_ARCH", "s390x")
    config = SchedulerBuildConfig(project_location=str(tmp_path), overrides=None)
    config.load_collection(settings.DEFAULTS)
    config.load_project()
    config.load_shell_env()
    assert settings.get(config, "k8s.version") == "1.35"  # project file over default
    assert settings.get(config, "build.arch") == "s390x"  # env over project file
    assert settings.get(config, "build.arch", "amd64") == "amd64"  # flag over everything
    assert settings.get(config, "build.component") == "kube-scheduler"  # default
    assert settings.get(Config(), "build.gocache_volume") == ""  # decided: the caller's own volume
    assert settings.gocache_volume("") == f"scheduler-build-gocache-u{os.getuid()}"




def test_every_flag_and_summary_reads_cleanly_in_help():
    """No flag gets invoke's accidental short flag `--` (a `no_x` parameter whose letters are all
    taken), and every task's `--list` summary (the docstring's first line) is a whole sentence."""
    from scheduler_build.commands import namespace

    for name, task in walk(namespace()):
        context = task.get_arguments()
        shorts = {flag for arg in context for flag in arg.names if len(flag) == 1}
        assert "-" not in shorts and "_" not in shorts, (name, sorted(shorts))
        summary = (task.__doc__ or "").strip().splitlines()[0]
        assert summary.endswith((".", ")")), (name, summary)
