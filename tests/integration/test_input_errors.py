"""Bad input through the real entry points (`inv` and `scheduler-build` in a subprocess, this
worktree's code): one `error:` line naming what is at fault, the documented exit code, no
traceback, nothing written. Hostile YAML/JSON runs under a memory and CPU-time cap."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

# Each case is a real `inv` / `scheduler-build` subprocess (about 2 s each; some ask the Go
# module proxy): integration, so the unit suite stays fast.

REPO = Path(__file__).resolve().parents[2]
INV = [sys.executable, "-m", "invoke", "-r", str(REPO)]
SB = [sys.executable, "-m", "scheduler_build"]
SPEC_OK = 'name: t\nversion: "0.1.0" \nkubernetes:\n  version: "1.36" \n'  # no plugins: no files needed

BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
DEEP_BLOCK = "x:\n  " + "- " * 20000 + "v\n"  # 20,000 nested block sequences on one line
DEEP_FLOW = "x: " + "[" * 20000 + "]" * 20000 + "\n"
DEEP_JSON = "[" * 20000 + "]" * 20000
KUBECONFIG_OK = "apiVersion: v1\nkind: Config\nclusters: []\n"


def _limits() -> None:
    # 1 GiB of address space, 20 s of CPU: a bomb that escapes the bounds fails the test, not the machine.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (20, 20))


def run(argv: list[str], cwd: Path = REPO, **extra_env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": "/usr/local/go/bin:" + os.environ.get("PATH", ""), **extra_env}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=env, preexec_fn=_limits)


def assert_one_line(proc: subprocess.CompletedProcess, code: int, substring: str) -> None:
    err = proc.stderr
    assert "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    assert proc.returncode == code, (proc.returncode, err[-2000:])
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err[-2000:]
    assert substring in errors[0], errors[0]
    assert len(errors[0]) < 600, "the error line must not carry a huge value"


# (name, files to create {relative: text}, argv after the entry point (FILE = tmp dir), exit code, substring)
CASES = [
    ("billion-laughs spec", {"s.yaml": BOMB}, ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2,
     "aliases expand to more than"),
    ("20000-deep block spec", {"s.yaml": DEEP_BLOCK}, ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2,
     "nested more than 100 levels"),
    ("20000-deep flow spec", {"s.yaml": DEEP_FLOW}, ["config.render", "--spec", "{d}/s.yaml", "--out", "{d}/out"], 2,
     "nested more than 100 levels"),
    ("huge spec", {"s.yaml": "a: " + "x" * (17 << 20) + "\n"},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2, "larger than the"),
    ("billion-laughs Policy", {"p.yaml": BOMB}, ["config.migrate-policy", "{d}/p.yaml"], 2, "aliases expand"),
    ("deep JSON Policy", {"p.json": DEEP_JSON}, ["config.migrate-policy", "{d}/p.json"], 2, "nested more than"),
    ("billion-laughs kubeconfig", {"k": BOMB}, ["deploy", "--kubeconfig", "{d}/k"], 2, "aliases expand"),
    ("not a kubeconfig", {"k": "just text\n"}, ["deploy", "--kubeconfig", "{d}/k"], 2, "not a kubeconfig"),
    ("kubeconfig without clusters", {"k": KUBECONFIG_OK}, ["deploy", "--kubeconfig", "{d}/k"], 2, "lists no clusters"),
    ("deploy --timeout abc", {"k": KUBECONFIG_OK.replace("[]", "[{name: x, cluster: {server: 'https://127.0.0.1:1'}}]")},
     ["deploy", "--kubeconfig", "{d}/k", "--timeout", "abc"], 2, "--timeout 'abc': not a duration"),
    ("extender --port abc", {}, ["extender.serve", "--port", "abc"], 2, "--port 'abc': not a TCP port number"),
    ("extender --port 70000", {}, ["extender.serve", "--port", "70000"], 2, "--port 70000: not a TCP port"),
    ("extender --max-body-bytes lots", {}, ["extender.serve", "--max-body-bytes", "lots"], 2, "not a size"),
    ("extender --log-level loud", {}, ["extender.serve", "--log-level", "loud"], 2, "not one of debug, info"),
    ("extender --log-level infoo", {}, ["extender.serve", "--log-level", "infoo"], 2, "did you mean 'info'"),
    ("extender --url-prefix with a space", {}, ["extender.serve", "--url-prefix", "/a b"], 2,
     "extender.url_prefix: '/a b' is not a URL path"),
    ("extender --kubeconfig not a kubeconfig", {"k": "just text\n"}, ["extender.serve", "--kubeconfig", "{d}/k"], 2,
     "extender.kubeconfig {d}/k: not a kubeconfig"),
    ("extender --kubeconfig billion laughs", {"k": BOMB}, ["extender.serve", "--kubeconfig", "{d}/k"], 2, "aliases expand"),
    ("extender --kubeconfig 20000 deep", {"k": DEEP_FLOW}, ["extender.serve", "--kubeconfig", "{d}/k"], 2,
     "nested too deeply"),
    ("extender --kubeconfig without contexts", {"k": KUBECONFIG_OK}, ["extender.serve", "--kubeconfig", "{d}/k"], 2,
     "not a usable kubeconfig"),
    ("registration clashing with an in-tree plugin",
     {"s.yaml": SPEC_OK + f"plugins:\n- path: {REPO}/tests/data/collection\n  register:\n"
                          "  - {name: NodeResourcesFit, factory: New, package: example.com/collection/pkg/gang}\n"},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2,
     "plugins[0].register[0].name: plugin name 'NodeResourcesFit' clashes with the in-tree plugin"),
    ("push --from-archive not a tar", {"a.tar": "not a tar\n"},
     ["image.push", "--from-archive", "{d}/a.tar", "--registry", "127.0.0.1:5000/x"], 2,
     "is not a readable tar (file could not be opened successfully)"),
    ("push --from-archive a directory", {"dir/x": "x"},
     ["image.push", "--from-archive", "{d}/dir", "--registry", "127.0.0.1:5000/x"], 2, "a directory, not the archive file"),
    ("verify a malformed digest", {"k.pub": "x"}, ["image.verify", "127.0.0.1:1/x@sha256:abc", "--key", "{d}/k.pub"], 2,
     "'sha256:abc' is not a sha256 digest"),
    ("verify a tag with a space", {"k.pub": "x"}, ["image.verify", "127.0.0.1:1/x:a b", "--key", "{d}/k.pub"], 2,
     "'a b' is not a tag"),
    ("render --out under a file", {"f": "x"}, ["config.render", "--out", "{d}/f/sub"], 2,
     "--out {d}/f/sub: {d}/f is a file, not a directory"),
    ("scaffold --out under a file", {"f": "x"}, ["scaffold.plugin", "--name", "Demo", "--points", "filter", "--module",
                                                "example.com/demo", "--out", "{d}/f/sub", "--no-tidy"], 2,
     "--out {d}/f/sub: {d}/f is a file, not a directory"),
    ("retarget a directory without go.mod", {"f": "x"}, ["plugin.retarget", "--path", "{d}", "--k8s-version", "v1.36.3"], 2,
     "--path {d} has no go.mod"),
    ("render --image malformed", {}, ["config.render", "--image", "bad image", "--out", "{d}/out"], 2,
     "--image 'bad image': not an image reference"),
    ("deploy --image malformed", {"k": KUBECONFIG_OK.replace("[]", "[{name: x, cluster: {server: 'https://127.0.0.1:1'}}]")},
     ["deploy", "--kubeconfig", "{d}/k", "--image", "Acme/Scheduler:1"], 2, "--image 'Acme/Scheduler:1': not an image"),
    ("scaffold a plugin named like an in-tree one", {}, ["scaffold.plugin", "--name", "NodeResourcesFit", "--points", "filter",
                                                        "--module", "example.com/demo", "--k8s-version", "v1.36.3",
                                                        "--out", "{d}/p"], 2,
     "--name 'NodeResourcesFit' is an in-tree plugin of Kubernetes v1.36.3"),
    ("migrate-policy --configmap-key on a plain Policy", {"p.json": '{"kind": "Policy", "apiVersion": "v1"}'},
     ["config.migrate-policy", "{d}/p.json", "--configmap-key", "policy.cfg"], 2,
     "--configmap-key 'policy.cfg' given, but the file is a Policy, not a ConfigMap"),
    ("validate --write-config-to with --fields-only", {},
     ["config.validate", "--fields-only", "--write-config-to", "{d}/defaulted.yaml"], 2,
     "--write-config-to needs the real kube-scheduler's check, which --fields-only skips"),
    ("validate --write-config-to a directory", {"dir/x": "x"}, ["config.validate", "--write-config-to", "{d}/dir"], 2,
     "--write-config-to {d}/dir is a directory"),
    ("migrate-policy --out a directory", {"p.json": '{"kind": "Policy", "apiVersion": "v1"}', "outdir/keep": "x"},
     ["config.migrate-policy", "{d}/p.json", "--out", "{d}/outdir"], 2, "{d}/outdir is a directory"),
    ("spec version: 1.10", {"s.yaml": SPEC_OK.replace('version: "0.1.0" ', "version: 1.10 ")},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2, "got the number 1.1"),
    ("kubernetes.version unquoted", {"s.yaml": SPEC_OK.replace('version: "1.36" ', "version: 1.30 ")},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2, "kubernetes.version: must be a quoted string, got the number 1.3"),
    ("urlPrefix with a space", {"s.yaml": SPEC_OK + "extenders:\n- urlPrefix: http://a b:80/x\n  filterVerb: filter\n"},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2, "contains whitespace"),
    ("urlPrefix port 99999", {"s.yaml": SPEC_OK + "extenders:\n- urlPrefix: http://h:99999/x\n  filterVerb: filter\n"},
     ["config.validate", "--fields-only", "--spec", "{d}/s.yaml"], 2, "port outside 1..65535"),
    ("misspelled task", {}, ["clen"], 2, "unknown task 'clen'; did you mean 'clean'?"),
    ("misspelled dotted task", {}, ["config.migrate_policy", "x"], 2, "did you mean 'config.migrate-policy'?"),
    ("misspelled flag", {}, ["clean", "--dryrun"], 2, "unknown flag --dryrun for clean; did you mean '--dry-run'?"),
    ("misspelled help target", {}, ["--help", "config.rendr"], 2, "did you mean 'config.render'?"),
    ("flag without its value", {}, ["clean", "--dry-run", "doctor", "--registry"], 2, "--registry needed value"),
    ("exact version refused by the proxy", {}, ["config.render", "--k8s-version", "v1.36.99", "--out", "{d}/out"], 2,
     "refused by the proxy"),
]


# Every case through inv; a sample through scheduler-build (the same tasks, another Program).
RUNS = [("inv", c) for c in CASES] + [("scheduler-build", c) for c in CASES
                                      if c[0] in ("billion-laughs spec", "extender --port abc", "spec version: 1.10", "misspelled task",
                                                 "misspelled flag")]


@pytest.mark.parametrize("entry, case", RUNS, ids=[f"{e}: {c[0]}" for e, c in RUNS])
def test_bad_input_is_one_line(tmp_path, entry, case):
    name, files, argv, code, substring = case
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    proc = run((INV if entry == "inv" else SB) + [a.format(d=tmp_path) for a in argv])
    assert_one_line(proc, code, substring.format(d=tmp_path))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


# Flags refused before anything expensive runs: no Docker engine and no module proxy here, so a
# task that started building first would fail with another error (or not at all).
EARLY = [
    ("cluster.up --timeout abc", ["cluster.up", "--timeout", "abc", "--state-dir", "{d}/state"],
     "--timeout 'abc': not a duration"),
    ("build --arch xyz", ["build", "--no-spec", "--arch", "xyz", "--dist", "{d}/dist"],
     "--arch: unsupported platform 'linux/xyz'"),
    ("build --name outside dist", ["build", "--no-spec", "--name", "../../evil", "--dist", "{d}/dist"],
     "--name '../../evil': not a name for dist/<name>/"),
    ("image.build --name with a space", ["image.build", "--no-spec", "--name", "a b", "--dist", "{d}/dist"],
     "--name 'a b': not a name for dist/<name>/"),
    ("build --version-suffix with a space", ["build", "--k8s-version", "v1.36.3", "--version-suffix", "bad suffix",
                                             "--dist", "{d}/dist"], "version suffix 'bad suffix' is not dot-separated"),
    ("image.build --repository upper case", ["image.build", "--k8s-version", "v1.36.3", "--repository", "Bad Repo",
                                             "--dist", "{d}/dist"], "--repository 'Bad Repo': not an image repository"),
    ("image.keygen --out under a file", ["image.keygen", "--allow-empty-password", "--out", "{d}/file/keys"], "--out {d}/file/keys: cannot write there"),
    ("cluster.up --registry without --node", ["cluster.up", "--registry", "http://127.0.0.1:5000", "--state-dir", "{d}/state"],
     "--registry and --registry-ca configure the node's containerd"),
    ("cluster.up --node --registry without a scheme", ["cluster.up", "--node", "--registry", "127.0.0.1:5000",
                                                       "--state-dir", "{d}/state"],
     "--registry 127.0.0.1:5000: say how the node reaches it"),
    ("cluster.up --node --registry-ca not a file", ["cluster.up", "--node", "--registry", "https://127.0.0.1:5443",
                                                    "--registry-ca", "{d}/file", "--state-dir", "{d}/state"],
     "--registry-ca {d}/file: not a PEM certificate"),
]


@pytest.mark.parametrize("argv, substring", [c[1:] for c in EARLY], ids=[c[0] for c in EARLY])
def test_bad_flags_are_refused_before_anything_runs(tmp_path, argv, substring):
    (tmp_path / "file").write_text("a file, not a directory\n")
    proc = run(INV + [a.format(d=tmp_path) for a in argv], DOCKER_HOST="unix:///nonexistent.sock", GOPROXY="off",
               GOFLAGS="-mod=mod")
    assert_one_line(proc, 2, substring.format(d=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# Numeric settings from the environment: read as their kind before any task runs (was a ValueError traceback).
ENV = [
    ("inv", "INVOKE_EXTENDER_PORT", "abc", ["extender.serve"], "environment variable INVOKE_EXTENDER_PORT 'abc': not a TCP port"),
    ("inv", "INVOKE_EXTENDER_ASSUME_TTL", "soon", ["extender.serve"], "INVOKE_EXTENDER_ASSUME_TTL 'soon': not a duration"),
    ("scheduler-build", "SCHEDULER_BUILD_DEPLOY_TIMEOUT", "5x", ["deploy"],
     "environment variable SCHEDULER_BUILD_DEPLOY_TIMEOUT '5x': not a duration; e.g. 300 (seconds), 90s, 5m"),
    ("scheduler-build", "SCHEDULER_BUILD_PUSH_RETRIES", "many", ["k8s.versions"], "PUSH_RETRIES 'many': not a whole number"),
]


@pytest.mark.parametrize("entry, var, value, argv, substring", ENV, ids=[f"{e[0]}: {e[1]}={e[2]}" for e in ENV])
def test_bad_numeric_environment_variable_is_one_line(entry, var, value, argv, substring):
    proc = run((INV if entry == "inv" else SB) + argv, **{var: value})
    assert_one_line(proc, 2, substring)


SCAFFOLD_PLAN = ["scaffold.plugin", "--name", "A", "--points", "filter", "--module", "example.com/a", "--out", "x",
                 "--dry-run"]


def test_scheduler_build_reads_the_project_invoke_yaml(tmp_path):
    """README: `scheduler-build` reads a project's invoke.yaml from the current directory
    (invoke itself never loads a project file for a program with a built-in namespace)."""
    (tmp_path / "invoke.yaml").write_text('k8s:\n  version: "1.35"\n')
    proc = run(SB + SCAFFOLD_PLAN, cwd=tmp_path)
    assert proc.returncode == 0 and "for Kubernetes 1.35" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("text, substring", [
    ('k8s:\n  version: "1.35"\n bad: [\n', "invoke.yaml: not a readable settings file (line 3, column 2"),
    ("- a list\n", "invoke.yaml: not a mapping of settings (got list)"),
    (BOMB, "aliases expand"),
    ("k8s:\n  version: 1.10\n", "invoke.yaml: k8s.version: the number 1.1 where a version string is meant"),
], ids=["syntax", "a list", "billion laughs", "unquoted version"])
def test_a_broken_project_invoke_yaml_is_one_line(tmp_path, text, substring):
    (tmp_path / "invoke.yaml").write_text(text)
    proc = run(SB + SCAFFOLD_PLAN, cwd=tmp_path)
    assert_one_line(proc, 2, substring)


def test_version_warning_in_spec_the_error_names_the_spec_field(tmp_path):
    (tmp_path / "s.yaml").write_text(SPEC_OK.replace('version: "1.36" ', 'version: "v1.36.99" '))
    proc = run(INV + ["config.render", "--spec", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out")])
    assert_one_line(proc, 2, f"{tmp_path / 's.yaml'}: kubernetes.version: Kubernetes v1.36.99")
    assert "nearest valid versions: v1.36.1, v1.36.3" in proc.stderr


def test_tasks_run_from_a_subdirectory(tmp_path):
    """From any subdirectory invoke's own upward search finds the checkout's tasks.py (no module of the
    package or of bench/ is named `tasks`), and settings' relative paths (the default spec) are relative
    to the checkout root."""
    proc = run([sys.executable, "-m", "invoke", "config.render", "--out", str(tmp_path / "out")],
               cwd=REPO / "scheduler_build" / "commands")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out" / "kustomization.yaml").is_file()
    proc = run([sys.executable, "-m", "invoke", "test", "--help"], cwd=REPO / "bench")
    assert proc.returncode == 0 and "--fast" in proc.stdout
    proc = run([sys.executable, "-m", "invoke", "clen"], cwd=REPO / "scheduler_build")
    assert_one_line(proc, 2, "did you mean 'clean'?")


@pytest.mark.parametrize("argv", [SB + ["--list"], INV + ["--list"], INV + ["--help", "clean"]],
                         ids=["scheduler-build --list", "inv --list", "inv --help clean"])
def test_closed_stdout_is_quiet(argv):
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(argv, cwd=REPO, stdout=write, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=60)
    os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 141


def test_extender_serve_dash_h_is_help():
    proc = run(INV + ["extender.serve", "-h"])
    assert proc.returncode == 0 and "--max-body-bytes" in proc.stdout and "Traceback" not in proc.stderr


def test_misspelled_core_flag_of_scheduler_build():
    proc = run(SB + ["--lst"])
    assert_one_line(proc, 2, "unknown flag --lst; did you mean '--list'?")
    assert proc.stdout == ""
