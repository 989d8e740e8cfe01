"""ci/setup.sh installs by capability: an engine that answers is left alone.

GitHub's Ubuntu runners ship Docker CE with containerd.io; Debian's docker.io,
containerd and runc installed over them would replace the runner's engine. The
test runs the real ci/setup.sh on this host, where the real engine answers
`docker info`, and stands in for the package manager only (a test cannot let
apt-get change the shared machine):

- `dpkg-query` (stub) reports every package absent, as on a runner image where
  the engine came from Docker's own packages, not Debian's;
- `apt-get` (stub) records what it was asked to install and installs nothing;
- `service` (stub) does nothing; `id` (stub) answers 0 for -u, as CI runs as root;
- the script runs from a copy of the checkout that holds ci/setup.sh and an empty
  `scheduler_build` package on PYTHONPATH, so its "is the package installed from
  this checkout" check passes without reinstalling the machine's editable install.

Negative control: the same run with the capability probes planted out (packages
judged by name only, as before) asks for docker.io, containerd and runc.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
ENGINE_PACKAGES = {"docker.io", "containerd", "runc"}

STUBS = {
    "dpkg-query": 'echo "dpkg-query: no packages found matching ${@: -1}" >&2; exit 1\n',
    "apt-get": 'echo "$*" >> "$APT_RECORD"\n',
    "service": "exit 0\n",
    "id": '[ "$1" = -u ] && { echo 0; exit 0; }; exec /usr/bin/id "$@"\n',
}


def run_setup(tmp_path: Path, script: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    stubs, checkout = tmp_path / "stubs", tmp_path / "checkout"
    for directory in (stubs, checkout / "ci", checkout / "scheduler_build"):
        directory.mkdir(parents=True, exist_ok=True)
    for name, body in STUBS.items():
        (stubs / name).write_text("#!/bin/bash\n" + body)
        (stubs / name).chmod(0o755)
    (checkout / "ci" / "setup.sh").write_text(script)
    (checkout / "scheduler_build" / "__init__.py").write_text("")
    record = tmp_path / "apt-get.txt"
    record.unlink(missing_ok=True)
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", PYTHONPATH=str(checkout), APT_RECORD=str(record))
    proc = subprocess.run(["bash", str(checkout / "ci" / "setup.sh")], env=env, capture_output=True, text=True, timeout=600)
    return proc, record.read_text().splitlines() if record.exists() else []


def installed_packages(calls: list[str]) -> set[str]:
    return {word for call in calls if call.startswith("install") for word in call.split() if not word.startswith("-")} - {"install"}


def test_setup_leaves_an_answering_engine_alone(tmp_path):
    assert subprocess.run(["docker", "info"], capture_output=True).returncode == 0, "the real engine must answer"
    proc, calls = run_setup(tmp_path, (REPO / "ci" / "setup.sh").read_text())
    assert proc.returncode == 0, proc.stderr
    asked = installed_packages(calls)
    # The stubbed dpkg-query denies busybox-static, whose capability (a *static* busybox)
    # is judged by the package: apt-get is really asked, so the assertion below is not vacuous.
    assert "busybox-static" in asked, calls
    assert not asked & ENGINE_PACKAGES, f"setup.sh would replace the runner's engine: {sorted(asked & ENGINE_PACKAGES)}"
    assert "starting dockerd" not in proc.stderr


def test_negative_control_by_package_name_replaces_the_engine(tmp_path):
    script = (REPO / "ci" / "setup.sh").read_text()
    planted = script.replace('installed "$pkg" || eval "$probe" || missing+=', 'installed "$pkg" || missing+=')
    assert planted != script, "the capability check moved: update the planted fault"
    proc, calls = run_setup(tmp_path, planted)
    assert proc.returncode == 0, proc.stderr
    assert ENGINE_PACKAGES <= installed_packages(calls), calls
