"""The oldest and newest supported Pythons for `inv test`: found on this machine, each given a
virtualenv (cached per checkout and pyproject.toml) holding this checkout installed editable with
its test extra, so the unit tests run on both ends of `requires-python`.

The supported range has one home, pyproject.toml's `Programming Language :: Python :: 3.N`
classifiers. Interpreters are found as `python3.N` on PATH or under pyenv's versions directory
(~/.pyenv/versions/3.N.*, how this machine and CI provide them); a missing one is an error, not a skip.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from scheduler_build.filelock import turn
from testkit.tier_records import records_args

REPO = Path(__file__).resolve().parents[1]
_CLASSIFIER = re.compile(r'"Programming Language :: Python :: (3\.\d+)"')


def supported() -> list[str]:
    """Every supported minor, oldest first, from pyproject.toml's classifiers."""
    found = _CLASSIFIER.findall((REPO / "pyproject.toml").read_text())
    return sorted(set(found), key=lambda v: tuple(map(int, v.split("."))))


def ends() -> list[str]:
    """The oldest and the newest supported minor."""
    versions = supported()
    return [versions[0], versions[-1]] if len(versions) > 1 else versions


def interpreter(minor: str) -> Path | None:
    """A `python<minor>` that really is that version (pyenv shims on PATH may not be)."""
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates = sorted(glob.glob(str(pyenv_root / "versions" / f"{minor}.*" / "bin" / f"python{minor}")), reverse=True)
    on_path = shutil.which(f"python{minor}")
    for candidate in [*candidates, *([on_path] if on_path else [])]:
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == minor:
            return Path(candidate)
    return None


def venv(minor: str, cache_dir: Path, log) -> Path:
    """The virtualenv of `minor` for this checkout, created and filled on first use."""
    python = interpreter(minor)
    if python is None:
        raise RuntimeError(f"Python {minor} not found (python{minor} on PATH or ~/.pyenv/versions/{minor}.*): "
                           f"install it; pyproject.toml says {minor} is supported")
    key = hashlib.sha256((REPO / "pyproject.toml").read_bytes() + str(REPO).encode() + str(python).encode())
    env_dir = cache_dir / "pythons" / f"{minor}-{key.hexdigest()[:12]}"
    ready = env_dir / ".ready"
    if ready.is_file():
        return env_dir
    # `inv test`'s warm-up may be creating it: that one goes first, this one then finds it ready.
    with turn(env_dir.with_name(env_dir.name + ".lock"), f"creating the Python {minor} virtualenv"):
        if not ready.is_file():
            _create(python, env_dir, minor, log)
            prune(cache_dir, minor, keep=env_dir)
    return env_dir


def _create(python: Path, env_dir: Path, minor: str, log) -> None:
    log(f"python {minor}: creating {env_dir} (this checkout with its test extra; once per pyproject.toml)")
    shutil.rmtree(env_dir, ignore_errors=True)
    # Without PYTHONPATH: pip would take a checkout on it (its egg-info) for this package installed.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    subprocess.run([str(python), "-m", "venv", str(env_dir)], check=True, env=clean)
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-e", f"{REPO}[test]"], check=True, env=clean)
    (env_dir / ".ready").write_text(f"{python}\n{REPO}\n")


def prune(cache_dir: Path, minor: str, keep: Path) -> list[Path]:
    """Remove the virtualenvs of `minor` (about 0.5 GiB each) that no run will use again: this checkout's
    older ones (an earlier pyproject.toml), and those of a checkout that is gone (a CI clone, an act
    workspace). Only those whose .ready names their checkout: ones made before it was recorded stay."""
    removed = []
    for other in sorted(p for p in (cache_dir / "pythons").glob(f"{minor}-*") if p.is_dir()):
        recorded = (other / ".ready").read_text().splitlines()[1:2] if (other / ".ready").is_file() else []
        if other != keep and recorded and (recorded == [str(REPO)] or not Path(recorded[0]).is_dir()):
            shutil.rmtree(other, ignore_errors=True)
            other.with_name(other.name + ".lock").unlink(missing_ok=True)
            removed.append(other)
    return removed


def run_at_once(argvs: dict[str, list[str]], envs: dict[str, dict[str, str]], logs: dict[str, Path], cwd: Path,
                say: Callable[[str], None], every: float = 30.0) -> int:
    """Run each minor's argv at once, its output into logs[minor]; every `every` seconds, the last line of
    each still running (pytest's "[ 42%]"); at its end, its last line, or its last 60 lines when it failed.
    The first failing run's exit code (in `argvs` order), 0 when all passed. Stopped runs are ended."""
    procs: dict[str, subprocess.Popen] = {}
    try:
        for minor, argv in argvs.items():
            say(f"+ python {minor}: " + " ".join(argv[1:]) + f" (output: {logs[minor]})")
            with open(logs[minor], "wb") as out:
                procs[minor] = subprocess.Popen(argv, cwd=cwd, env=envs[minor], stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL)
        codes = _wait_all(procs, logs, say, every)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    return next((code for code in (codes[m] for m in argvs) if code != 0), 0)


def _wait_all(procs: dict[str, subprocess.Popen], logs: dict[str, Path], say: Callable[[str], None],
              every: float) -> dict[str, int]:
    codes: dict[str, int] = {}
    while len(codes) < len(procs):
        for minor, proc in procs.items():
            if minor not in codes and proc.poll() is not None:
                codes[minor] = proc.returncode
                lines = logs[minor].read_text(errors="replace").splitlines()
                shown = lines[-60:] if proc.returncode != 0 else lines[-1:]
                say(f"python {minor}: {'passed' if proc.returncode == 0 else f'FAILED (exit {proc.returncode})'}")
                for line in shown:
                    say(f"    {line}")
        if len(codes) < len(procs):
            deadline = time.monotonic() + every
            while time.monotonic() < deadline and all(p.poll() is None for m, p in procs.items() if m not in codes):
                time.sleep(0.2)
            for minor in (m for m in procs if m not in codes and procs[m].poll() is None):
                lines = logs[minor].read_text(errors="replace").splitlines()
                # pytest -q ends each full line of dots with "[ 42%]"; the last line is still filling up
                done = next((line.rsplit("[", 1)[-1].strip(" ]") for line in reversed(lines) if line.endswith("%]")), "")
                say(f"python {minor}: running" + (f", {done} done" if done else ""))
    return codes


def on_each_end(out: Path, marker: str, verbose: bool, cache_dir: Path, say: Callable[[str], None],
                at_once: bool = True) -> int:
    """The tests of `marker` on the oldest and the newest supported Python, each run's output in
    <out>/unit-python3.N.log: both at once (each keeps one core busy), or one after the other (beside
    another tier, where one core is what is left). The first failing run's exit code, 0 when all passed."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    argvs, envs = {}, {}
    for minor in [m for m in ends() if m != running]:  # the running one has run them in the unit tier
        try:
            env_dir = venv(minor, cache_dir, say)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            say(f"error: Python {minor}: {exc}")
            return 2
        envs[minor] = dict(os.environ, PATH=f"{env_dir / 'bin'}:{os.environ.get('PATH', '')}")
        argvs[minor] = [str(env_dir / "bin" / "python"), "-m", "pytest", "-q", "-m", marker,
                        *records_args(out, f"unit-python{minor}"), *(["-v"] if verbose else [])]
    logs = {m: out / f"unit-python{m}.log" for m in argvs}
    if at_once:
        return run_at_once(argvs, envs, logs, REPO, say)
    codes = [run_at_once({m: argv}, {m: envs[m]}, {m: logs[m]}, REPO, say) for m, argv in argvs.items()]
    return next((code for code in codes if code != 0), 0)


def main(argv: list[str] | None = None) -> int:
    """`python -m testkit.pythons OUT MARKER [--verbose] [--one-at-a-time]`: the unit-pythons tier as a
    process of its own, so `inv test` can start it beside another tier (testkit/beside.py)."""
    import argparse

    from scheduler_build import settings
    from scheduler_build.progress import log

    parser = argparse.ArgumentParser(prog="python -m testkit.pythons")
    parser.add_argument("out", type=Path)
    parser.add_argument("marker")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--one-at-a-time", action="store_true")
    args = parser.parse_args(argv)
    return on_each_end(args.out, args.marker, args.verbose, settings.cache_dir(), log, at_once=not args.one_at_a_time)


if __name__ == "__main__":
    sys.exit(main())
