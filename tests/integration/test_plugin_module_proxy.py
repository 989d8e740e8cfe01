"""A `module` + `version` plugin served by a local file-based Go module proxy, compiled in for real.

The plugin is a scaffolded module (`inv scaffold.plugin`) published as a proxy would: <module>/@v/list,
v0.1.0.info, v0.1.0.mod and v0.1.0.zip under a directory that GOPROXY=file://... puts first. The real
`go` resolves, downloads, verifies (GONOSUMDB: the checksum database does not know it) and vendors it;
the build compiles it in; the binary accepts a configuration giving the plugin args. No test depends on
a third-party module being on the public proxy.

Cost: one scaffold (no tidy), one tidy + vendor, one kube-scheduler compile whose main.go is new.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

from conftest import REPO, TEST_K8S_MINOR


MODULE = "example.com/sbtest/modfilter"
VERSION = "v0.1.0"
ZIP_TIME = (2026, 1, 1, 0, 0, 0)  # fixed: the module cache may already hold this version from an earlier run


def inv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True, env=env)


def publish(source: Path, proxy: Path, module: str, version: str) -> None:
    """Write the module as GOPROXY's file layout: list, .info, .mod and a module zip (module@version/ prefix)."""
    at = proxy / module / "@v"
    at.mkdir(parents=True)
    (at / "list").write_text(version + "\n")
    (at / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2026-01-01T00:00:00Z"}))
    (at / f"{version}.mod").write_bytes((source / "go.mod").read_bytes())
    with zipfile.ZipFile(at / f"{version}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{module}@{version}/{path.relative_to(source).as_posix()}", ZIP_TIME)
            archive.writestr(info, path.read_bytes())


def test_module_plugin_from_a_file_proxy_is_compiled_in_and_accepted(tmp_path):
    source = tmp_path / "modfilter"
    made = inv("scaffold.plugin", "--name", "ModFilter", "--points", "filter", "--module", MODULE,
               "--k8s-version", TEST_K8S_MINOR, "--out", str(source), "--no-tidy", "--json")
    assert made.returncode == 0, made.stderr[-3000:]
    package = json.loads(made.stdout)["package"]
    proxy = tmp_path / "proxy"
    publish(source, proxy, MODULE, VERSION)
    upstream = subprocess.run(["go", "env", "GOPROXY"], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, GOPROXY=f"file://{proxy},{upstream}", GONOSUMDB="example.com/sbtest")
    spec = {
        "name": "modfilter-scheduler", "version": "0.1.0", "kubernetes": {"version": TEST_K8S_MINOR},
        "plugins": [{"module": MODULE, "version": VERSION, "package": package, "names": ["ModFilter"]}],
        "profiles": [{"schedulerName": "modfilter-scheduler",
                      "plugins": {"filter": {"enabled": [{"name": "ModFilter"}]}},
                      "pluginConfig": [{"name": "ModFilter", "args": {"limit": 3}}]}],
    }
    spec_path = tmp_path / "scheduler.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    built = inv("build", "--spec", str(spec_path), "--dist", str(tmp_path / "dist"), "--no-pull", "--json", env=env)
    assert built.returncode == 0, built.stderr[-5000:]
    info = json.loads(built.stdout)
    assert info["plugins"] == [{"package": package, "names": ["ModFilter"], "source": "module", "module": MODULE, "version": VERSION}]
    written = tmp_path / "written.yaml"
    ok = inv("config.validate", "--spec", str(spec_path), "--binary", info["binary"]["path"], "--write-config-to", str(written))
    assert ok.returncode == 0, ok.stderr[-5000:]
    profile = yaml.safe_load(written.read_text())["profiles"][0]
    assert "ModFilter" in [p["name"] for p in profile["plugins"]["filter"]["enabled"]]
    assert {c["name"]: c.get("args") for c in profile["pluginConfig"]}["ModFilter"]["limit"] == 3
    # The scaffold's own args validation runs inside the binary.
    spec["profiles"][0]["pluginConfig"][0]["args"]["limit"] = -1
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    refused = inv("config.validate", "--spec", str(spec_path), "--binary", info["binary"]["path"])
    assert refused.returncode != 0 and "limit" in refused.stderr.strip().splitlines()[-1], refused.stderr[-2000:]
