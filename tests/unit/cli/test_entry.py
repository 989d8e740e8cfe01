"""A CLI shaped like the tools release engineers know (issue 22, examples 3, 4 and 7): TASK --help is
always help, flag-like positional values are refused, invoke's run-related core flags are gone (and never
suggested under `inv`), help/version subcommands, --version with the commit, -q/-v, --spec -, a positional
spec, no key pair with an empty password unless asked, and Ctrl-C at start-up is one line.

The same examples run against the installed wheel in tests/integration/test_wheel.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "examples" / "underlay" / "scheduler.yaml"


def sb(argv: list[str], cwd: Path, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_BUILD_", "COSIGN_"))}
    full.update(PYTHONPATH=str(REPO), **env)
    return subprocess.run([sys.executable, "-m", "scheduler_build", *argv], cwd=cwd, env=full, input=stdin,
                          capture_output=True, text=True, timeout=300)


def refused(proc: subprocess.CompletedProcess, substring: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("error:") == 1 and substring in proc.stderr, proc.stderr[-2000:]


POSITIONAL_TASKS = ["k8s.resolve", "image.keygen", "image.verify", "config.migrate-policy"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("task", POSITIONAL_TASKS)
def test_task_help_is_help_even_with_a_positional(tmp_path, task, flag):
    """Was: `image.keygen --help` wrote a private key with an empty password into ./--help."""
    proc = sb([task, flag], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"Usage: scheduler-build [--core-opts] {task}" in proc.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("task", POSITIONAL_TASKS)
def test_a_flag_like_positional_is_refused(tmp_path, task):
    refused(sb([task, "--outdir"], tmp_path), "looks like a flag, not a value")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--dry", "-R", "--echo", "-e", "--pty", "-p", "--warn-only", "-w", "--hide=both",
                                  "--command-timeout=5", "-T", "--prompt-for-sudo-password", "-f"])
def test_invokes_run_flags_are_refused(tmp_path, flag):
    refused(sb([flag, "k8s.versions"], tmp_path), f"unknown flag {flag.split('=')[0]}")


def test_run_flags_are_hidden_and_never_suggested(tmp_path):
    core = sb(["--help"], tmp_path).stdout.split("Subcommands:")[0]
    assert "--quiet" in core
    for flag in ("--dry", "--echo", "--pty", "--warn-only", "--hide", "--command-timeout", "-f,"):
        assert flag not in core, flag
    for cli in ([sys.executable, "-m", "scheduler_build"], ["inv"]):
        proc = subprocess.run([*cli, "image.push", "--dry-run"], cwd=REPO, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.returncode == 2 and "unknown flag --dry-run for image.push" in proc.stderr, proc.stderr
        assert "'--dry'" not in proc.stderr


def test_help_and_version_subcommands(tmp_path):
    version = sb(["--version"], tmp_path)
    assert version.returncode == 0
    assert re.fullmatch(r"scheduler-build \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?, Python 3\.\d+\.\d+\)\n",
                        version.stdout), version.stdout
    assert sb(["version"], tmp_path).stdout == version.stdout
    assert "Usage: scheduler-build [--core-opts] build" in sb(["help", "build"], tmp_path).stdout
    assert "Core options:" in sb(["help"], tmp_path).stdout
    assert "SCHEDULER_BUILD_PUSH_INSECURE" in sb(["help", "settings"], tmp_path).stdout
    assert "--print-completion-script bash" in sb(["help", "completion"], tmp_path).stdout
    refused(sb(["help", "biuld"], tmp_path), "did you mean 'build'?")


def test_extender_version(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import sys; from scheduler_build.extender.cli import main; "
                           "sys.argv = ['scheduler-extender', '--version']; main()"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stdout.startswith("scheduler-extender 0."), proc.stdout + proc.stderr
    assert "(commit " in proc.stdout


VALIDATE = ["config.validate", "--fields-only"]


def test_quiet_and_verbose(tmp_path):
    normal = sb([*VALIDATE, "--spec", str(SPEC)], tmp_path)
    assert normal.returncode == 0 and "==> spec" in normal.stderr
    quiet = sb(["-q", *VALIDATE, "--spec", str(SPEC)], tmp_path)
    assert quiet.returncode == 0 and quiet.stdout == normal.stdout and "==>" not in quiet.stderr, quiet.stderr
    (tmp_path / "scheduler-build.yaml").write_text("config:\n  fields_only: true\n")
    verbose = sb(["-v", "config.validate", "--spec", str(SPEC)], tmp_path)
    assert f"settings: {tmp_path / 'scheduler-build.yaml'} (project)" in verbose.stderr, verbose.stderr


def test_spec_from_stdin_and_as_a_positional(tmp_path):
    work = SPEC.parent  # the spec's relative paths (./plugin, ../patches) mean what they do beside it
    piped = sb([*VALIDATE, "--spec", "-"], work, stdin=SPEC.read_text())
    assert piped.returncode == 0 and piped.stdout.startswith("ok: <stdin> "), piped.stderr[-2000:]
    assert not list(work.glob(".scheduler-build-stdin-*"))
    broken = sb([*VALIDATE, "--spec", "-"], tmp_path, stdin="name: [unclosed\n")
    assert broken.returncode == 2 and "<stdin>" in broken.stderr and not list(tmp_path.iterdir()), broken.stderr
    for argv in ([*VALIDATE, "scheduler.yaml"], ["config.validate", "scheduler.yaml", "--fields-only"]):
        proc = sb(argv, work)
        assert proc.returncode == 0 and proc.stdout == "ok: scheduler.yaml (fields, plugins of Kubernetes " \
            + proc.stdout.split("Kubernetes ", 1)[1], proc.stderr[-2000:]
    refused(sb([*VALIDATE, "--spec", "scheduler.yaml", "other.yaml"], work), "reads one spec")


def test_no_key_pair_with_an_empty_password_unless_asked(tmp_path):
    refused(sb(["image.keygen", "--out", "keys"], tmp_path), "no password for the private key")
    assert list(tmp_path.iterdir()) == []
    help_text = sb(["image.keygen", "--help"], tmp_path).stdout
    assert "--allow-empty-password" in help_text


def test_ctrl_c_during_start_up_is_one_line(tmp_path):
    """Ctrl-C while the program is still importing: simulated deterministically by an import hook that
    raises KeyboardInterrupt when invoke is imported, as the signal would."""
    code = ("import sys\n"
            "class Interrupt:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'invoke':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Interrupt())\n"
            "sys.argv = ['scheduler-build', '--list']\n"
            "from scheduler_build.cli.entry import main\n"
            "main()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 130 and proc.stderr == "interrupted\n", proc.stderr


def _answers(url: str) -> bool:
    """Any HTTP answer (503 included: /readyz without an API server) means the server is serving."""
    try:
        urllib.request.urlopen(url + "/healthz", timeout=5).close()
    except urllib.error.HTTPError:
        pass
    except OSError:
        return False
    return True


def _signals_as_in_a_terminal() -> None:
    """The child starts with SIGINT and SIGTERM at their defaults, as from a terminal: a suite run in the
    background (`cmd &`, nohup, some CI runners) hands its children SIGINT ignored, which the extender
    rightly keeps ignored, so Ctrl-C's status could not be observed."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("when", ["starting", "serving"])
@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_extender_exit_status_on_signals_is_what_the_docs_say(sig, status, when):
    """The documented exit statuses, whenever the signal comes: SIGTERM (the kubelet's) ends it by that
    signal (143 in a shell), Ctrl-C with 130; both after draining. `starting`: at its first log line,
    before uvicorn runs; `serving`: once it answers HTTP (its bound port is in the log line)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from scheduler_build.extender.cli import main; "
                             "sys.argv = ['scheduler-extender', '--port', '0']; main()"],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            preexec_fn=_signals_as_in_a_terminal)
    try:
        for line in proc.stderr:
            serving = re.search(r"extender serving on (http://[0-9.:]+)", line)
            if serving:
                break
        assert serving, "the extender ended without serving"
        deadline = time.monotonic() + 120
        while when == "serving" and not _answers(serving.group(1)):
            assert time.monotonic() < deadline, "the extender did not answer HTTP"
            time.sleep(0.1)
        proc.send_signal(sig)
        stderr = proc.communicate(timeout=120)[1]
    finally:
        proc.kill() if proc.poll() is None else None
    shell_status = 128 - proc.returncode if proc.returncode < 0 else proc.returncode
    assert shell_status == status, stderr[-2000:]
    assert "Traceback" not in stderr
    assert f"exit status {status}" in EXIT_CODES or f"exits {status}" in EXIT_CODES, EXIT_CODES


EXIT_CODES = next(line for line in (REPO / "docs" / "settings.md").read_text().splitlines() if line.startswith("| 130 |"))


LISTED = ("import sys; from scheduler_build.cli.app import program; program.run(['scheduler-build', '--list'], exit=False); "
          "print('IMPORTED' if 'scheduler_build.commands' in sys.modules else 'LIGHT', file=sys.stderr)")


def test_list_is_served_from_the_cached_listing_without_importing_the_tasks(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", LISTED], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0 and first.stderr.strip().endswith("IMPORTED"), first.stderr  # none cached yet
    second = subprocess.run([sys.executable, "-c", LISTED], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert second.returncode == 0 and second.stderr.strip().endswith("LIGHT"), second.stderr
    assert second.stdout == first.stdout and "image.push" in second.stdout
    completions = []
    for cache in (tmp_path / "cache", tmp_path / "empty"):  # from the listing, then from the real tasks
        proc = subprocess.run([sys.executable, "-m", "scheduler_build", "--complete", "--", "scheduler-build", "build",
                               "--"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**env, "XDG_CACHE_HOME": str(cache)})
        completions.append(set(proc.stdout.split()))
    assert completions[0] == completions[1] and completions[0]


def test_the_listing_describes_every_task_and_flag():
    from scheduler_build.cli import listing as cli_listing
    from scheduler_build.cli.app import _namespace

    real = _namespace()
    described = cli_listing.describe(real)
    assert cli_listing.describe(cli_listing.build(described)) == described
    push = next(t for c in described["collections"] if c["name"] == "image" for t in c["tasks"] if t["name"] == "push")
    assert {"--sign", "--no-insecure"} <= {"--" + n.replace("_", "-") for a in push["args"] for n in a["names"]}
    # Describing leaves the real tasks' help texts in place (invoke's get_arguments() consumes them), so the
    # `TASK --help` that follows a listing rebuild in the same run shows every flag's help. In a fresh
    # interpreter: tasks are module-level, and earlier tests here may have consumed them already.
    code = ("from scheduler_build.cli import listing as cli_listing; from scheduler_build.cli.app import _namespace; ns = _namespace(); "
            "push = ns.collections['image'].tasks['push']; before = dict(push.help); cli_listing.describe(ns); "
            "print(len(before), push.help == before)")  # push has inverse flags (add_inverse_flags)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) > 10 and out[1] == "True", out


def test_core_flags_mean_the_same_after_the_task_name(tmp_path):
    """`-q` after the task silenced nothing, `--config F` after it failed ("needed value") while `--config=F`
    worked: each now means what it means before the task name. The negative control: no -q, phase lines."""
    settings_file = tmp_path / "my.yaml"
    settings_file.write_text("build:\n  arch: amd64\n")
    task = ["config.validate", str(SPEC), "--fields-only"]
    loud = sb(task, tmp_path)
    assert loud.returncode == 0 and "==> spec" in loud.stderr, loud.stderr[-2000:]
    for argv in ([*task, "-q"], ["-q", *task], [*task, "--quiet"]):
        quiet = sb(argv, tmp_path)
        assert quiet.returncode == 0 and "==>" not in quiet.stderr, (argv, quiet.stderr[-2000:])
    for argv in ([*task, "--config", str(settings_file), "-v"], [*task, f"--config={settings_file}", "-v"],
                 ["--config", str(settings_file), "-v", *task]):
        shown = sb(argv, tmp_path)
        assert shown.returncode == 0 and f"settings: {settings_file} (runtime)" in shown.stderr, (argv, shown.stderr[-2000:])
