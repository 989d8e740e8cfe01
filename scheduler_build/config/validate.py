"""Validation of the rendered configuration: field checks, then the real kube-scheduler's verdict.

- `check_fields(spec, version, cache)`: every configuration field exists in that
  version's kubescheduler.config.k8s.io/v1 (read from its source), and every
  plugin name the spec enables is known to that version (in-tree, added by the
  spec's patches, or registered by its out-of-tree plugins).
- `validate_with_binary(binary, config, image)`: the real kube-scheduler's
  validation mode (`--config F --write-config-to OUT`) in a throw-away container
  of the builder image with no network, through scheduler_build.engine; its own
  error text is shown on refusal. TLS files an extender names get generated
  stand-ins (scheduler_build.pki).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler_build import engine as engine_mod
from scheduler_build import pki
from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build import builder_image as builder
from scheduler_build.config import api_fields, render, schedulerconfig
from scheduler_build.resolve import intree, vocabulary
from scheduler_build.engine import Mount
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase
from scheduler_build.spec import Spec


def check_fields(spec: Spec, k8s_version: str, cache_root: Path) -> frozenset[str]:
    """The field-by-field half of `inv config.validate` beyond `spec.load`: the configuration's
    fields against the version's own API (api_fields), then plugin names.

    Known names: the version's in-tree plugins, those the spec's patch series
    registers in-tree, and those the spec's out-of-tree plugins register.
    """
    check_config_api(spec, k8s_version, cache_root)
    with phase("plugins", f"in-tree names of Kubernetes {k8s_version}"):
        known = set(intree.in_tree_plugins(k8s_version, cache_root))
        patched = intree.patched_plugin_names(spec.patches)
        known |= patched
        log(f"    {len(known) - len(patched)} in-tree plugins, {len(patched)} added by patches"
            f"{' (' + ', '.join(sorted(patched)) + ')' if patched else ''}, {len(spec.plugin_names)} from the spec's plugins")
    spec_mod.check_plugin_names(spec, frozenset(known), k8s_version)
    return frozenset(known)


def check_config_api(spec: Spec, k8s_version: str, cache_root: Path, strict: bool = True) -> None:
    """The configuration's fields against the version's kubescheduler.config.k8s.io/v1 (read from its source).

    strict (validate): the API must be readable. Not strict (render): offline and not cached, the nearest
    cached older release's API is used (said on stderr), and with none cached the check is skipped (said too).
    """
    with phase("fields", f"{schedulerconfig.CONFIG_API} of Kubernetes {k8s_version}"):
        api = (vocabulary.config_api(k8s_version, cache_root) if strict
               else vocabulary.config_api_or_fallback(k8s_version, cache_root))
        if api is None:
            log("    skipped: `inv config.validate` checks the fields once the API can be read")
            return
        log(f"    extension points: {', '.join(api.extension_points)}")
    api_fields.check_api_fields(spec, api, lambda keys: vocabulary.introduced_in(keys, api.version, cache_root))


# A kubeconfig that points nowhere: the validation mode never connects, but the
# scheduler refuses to start without one (or --master).
DUMMY_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:1"}
  name: none
contexts:
- context: {cluster: none, user: none}
  name: none
current-context: none
users:
- name: none
  user: {token: none}
"""


@dataclass
class BinaryVerdict:
    ok: bool
    output: str  # the binary's own stderr/stdout
    written: str  # the defaulted configuration it wrote (empty on refusal)


def validate_with_binary(binary: Path, config: str, image: str, engine: Any = None) -> BinaryVerdict:
    """Run `kube-scheduler --config F --write-config-to OUT` in a container with no network.

    The binary is static, so the builder image (`scheduler-build/golang:*`) only
    provides a filesystem to run it in; mounts are read-only except the output.
    """
    binary = Path(binary).resolve()
    if not binary.is_file():
        raise UserError(f"no kube-scheduler binary at {binary}", "run `inv build --spec S` first or pass --binary PATH")
    engine = engine or engine_mod.connect()
    with tempfile.TemporaryDirectory(prefix="sb-validate-") as tmp:
        work = Path(tmp)
        # With --config the --kubeconfig flag is ignored: point the configuration's own
        # clientConnection at the dummy (a path from the cluster would not exist here).
        doc = yaml.safe_load(config)
        if isinstance(doc, dict):
            doc.setdefault("clientConnection", {})
            if isinstance(doc["clientConnection"], dict):
                doc["clientConnection"]["kubeconfig"] = "/sb/in/kubeconfig"
            config = render.dump(doc)
        (work / "config.yaml").write_text(config)
        (work / "kubeconfig").write_text(DUMMY_KUBECONFIG)
        (work / "out").mkdir()
        # The binary runs as the image's non-root uid: let it read the inputs, write the output.
        os.chmod(work, 0o755)
        for name in ("config.yaml", "kubeconfig"):
            os.chmod(work / name, 0o644)
        os.chmod(work / "out", 0o777)
        lines: list[str] = []
        mounts = [
            Mount("/sb/kube-scheduler", str(binary), read_only=True),
            Mount("/sb/in", str(work), read_only=True),
            Mount("/sb/out", str(work / "out")),
        ]
        mounts += _tls_standins(doc if isinstance(doc, dict) else {}, work)
        code = engine.run(
            image,
            ["/sb/kube-scheduler", "--config=/sb/in/config.yaml", "--write-config-to=/sb/out/config.yaml",
             "--master=https://127.0.0.1:1", "--authentication-skip-lookup=true", "--v=0"],
            mounts=mounts, environment={}, workdir="/sb/out", network="none", on_line=lines.append,
            user="65532:65532",
        )
        written = work / "out" / "config.yaml"
        text = written.read_text() if written.is_file() else ""
    output = "\n".join(lines)
    return BinaryVerdict(ok=code == 0 and bool(text), output=output, written=text)


def _tls_standins(doc: dict, work: Path) -> list[Mount]:
    """Throw-away PEM files at the paths extenders' tlsConfig names.

    Those files live in the pod (a mounted Secret), not here; the binary opens
    them while building extenders, so validation mounts a generated CA, cert and
    key at the same paths. What is checked is the configuration, not the files.
    """
    wanted = {}
    for ext in doc.get("extenders") or []:
        tls = (ext or {}).get("tlsConfig") or {}
        for key, role in (("caFile", "ca"), ("certFile", "cert"), ("keyFile", "key")):
            if isinstance(tls.get(key), str) and tls[key].startswith("/"):
                wanted[tls[key]] = role
    if not wanted:
        return []
    pems = pki.self_signed_pems()
    mounts = []
    for index, (target, role) in enumerate(sorted(wanted.items())):
        local = work / f"standin-{index}.pem"
        local.write_bytes(pems[role])
        os.chmod(local, 0o644)
        mounts.append(Mount(target, str(local), read_only=True))
        log(f"    {target}: a generated stand-in (the pod must provide the real {role})")
    return mounts


def refusal_reason(output: str) -> str:
    """The binary's own error line (klog's `"command failed" err="..."` or cobra's `Error: ...`)."""
    for line in reversed(output.splitlines()):
        match = re.search(r'err="((?:[^"\\]|\\.)*)"', line)
        if match and ("command failed" in line or "run.go" in line):
            return match.group(1).encode().decode("unicode_escape")
    for line in reversed(output.splitlines()):
        if line.startswith("Error:") or " E" in line[:2] or line.startswith("E"):
            return line.strip()
    return (output.strip().splitlines() or ["no output"])[-1]


_UNKNOWN_ARGS = re.compile(r'initializing plugin \\?"([^"\\]+)\\?": .*got \*runtime\.Unknown')
REFUSAL_HINT = "the binary's own output is above; fix the spec field it names"


def refusal_hint(output: str, spec: Spec) -> str:
    """The fix for a refusal: for args the binary could not decode, the entry whose scheme must be imported."""
    match = _UNKNOWN_ARGS.search(refusal_reason(output)) or _UNKNOWN_ARGS.search(output)
    if not match:
        return REFUSAL_HINT
    name = match.group(1)
    owner = next((p for p in spec.plugins if name in p.plugin_names), None)
    where = (f"{owner.field}.imports (module {owner.module or owner.path})" if owner
             else "the imports of the plugins[] entry that registers it")
    return (f"plugin {name!r} got its args undecoded (its args type is not registered in the binary's scheme): "
            f"list its module's scheme package (e.g. <module>/apis/config/scheme) under {where} "
            "in the build spec, rebuild, and validate again")


def builder_image(engine: Any = None) -> str:
    """The newest local `scheduler-build/golang:*` image (bootstrapped by `inv builder.bootstrap`)."""
    engine = engine or engine_mod.connect()
    tags = sorted((t for image in engine.images(builder.BOOTSTRAP_REPO) for t in image.tags),
                  key=lambda t: builder.parse_go_version(t.rsplit(":", 1)[1]))
    if not tags:
        raise UserError(f"no {builder.BOOTSTRAP_REPO}:* image to run the binary in",
                        "run `inv builder.bootstrap` (or any `inv build`) first")
    return tags[-1]


def default_binary(spec: Spec, k8s_version: str, dist_dir: Path) -> Path:
    """Where `inv build --spec` puts the binary for this host: dist/<name>/<version>/linux-<arch>/."""
    return platforms.dist_dir_for(dist_dir, spec.name, k8s_version, platforms.host_arch()) / "kube-scheduler"
