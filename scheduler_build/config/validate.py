"""Validation of the rendered configuration: field checks, then the real kube-scheduler's verdict.

- `check_fields(spec, version, cache)`: every configuration field exists in that
  version's kubescheduler.config.k8s.io/v1 (read from its source), and every
  plugin name the spec enables is known to that version (in-tree, added by the
  spec's patches, or registered by its out-of-tree plugins).
- `validate_with_binary(binary, config, image)`: the real kube-scheduler's
  validation mode (`--config F --write-config-to OUT`) in a throw-away container
  of the builder image with no network, through scheduler_build.engine: the
  binary and its inputs go in as one archive, the written configuration comes
  out the same way (no host path is mounted, so a remote engine serves too); its
  own error text is shown on refusal. TLS files an extender names get generated
  stand-ins (scheduler_build.pki).
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from scheduler_build import engine as engine_mod
from scheduler_build.atomic import write_atomic
from scheduler_build import pki
from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build import builder_image as builder
from scheduler_build.config import api_fields, batching, feature_gates, render, schedulerconfig
from scheduler_build.resolve import intree, vocabulary
from scheduler_build.errors import UserError, for_program
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
            log(for_program("    skipped: `inv config.validate` checks the fields once the API can be read"))
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


def validate_with_binary(binary: Path, config: str, image: str, engine: Any = None,
                         flags: tuple[str, ...] | list[str] = ()) -> BinaryVerdict:
    """Run `kube-scheduler --config F --write-config-to OUT` in a container with no network.

    ``flags``: the spec's own (spec.scheduler_flags: `--feature-gates`), which the binary judges as it parses them.
    The binary is static, so the builder image (`scheduler-build/golang:*`) only
    provides a filesystem to run it in; the binary runs as a non-root uid that
    may write only /sb/out.
    """
    binary = Path(binary).resolve()
    if not binary.is_file():
        raise UserError(f"no kube-scheduler binary at {binary}", "run `inv build --spec S` first or pass --binary PATH")
    engine = engine or engine_mod.connect()
    # With --config the --kubeconfig flag is ignored: point the configuration's own
    # clientConnection at the dummy (a path from the cluster would not exist here).
    doc = yaml.safe_load(config)
    if isinstance(doc, dict):
        doc.setdefault("clientConnection", {})
        if isinstance(doc["clientConnection"], dict):
            doc["clientConnection"]["kubeconfig"] = "/sb/in/kubeconfig"
        config = render.dump(doc)
    files = {"sb/in/config.yaml": config.encode(), "sb/in/kubeconfig": DUMMY_KUBECONFIG.encode()}
    files |= _tls_standins(doc if isinstance(doc, dict) else {})
    lines: list[str] = []
    argv = ["/sb/kube-scheduler", "--config=/sb/in/config.yaml", "--write-config-to=/sb/out/config.yaml",
            "--master=https://127.0.0.1:1", "--authentication-skip-lookup=true", "--v=0", *flags]
    with engine.container(image, argv, environment={}, workdir="/sb/out", network="none",
                          user="65532:65532") as box:
        box.put("/", _inputs(binary, files))
        code = box.run(on_line=lines.append)
        text = ""
        if code == 0 and box.stat("/sb/out/config.yaml") is not None:
            with tempfile.TemporaryDirectory(prefix="sb-validate-") as tmp:
                box.fetch("/sb/out/config.yaml", Path(tmp) / "config.yaml")
                text = (Path(tmp) / "config.yaml").read_text()
    output = "\n".join(lines)
    return BinaryVerdict(ok=code == 0 and bool(text), output=output, written=text)


def _inputs(binary: Path, files: dict[str, bytes]) -> bytes:
    """One archive for `/`: the binary at /sb/kube-scheduler, `files` readable by all, /sb/out writable by all."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, mode in (("sb", 0o755), ("sb/in", 0o755), ("sb/out", 0o777)):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            archive.addfile(info)
        info = archive.gettarinfo(str(binary), arcname="sb/kube-scheduler")
        info.mode, info.uid, info.gid, info.uname, info.gname = 0o755, 0, 0, "", ""
        with open(binary, "rb") as handle:
            archive.addfile(info, handle)
        for name, data in sorted(files.items()):
            _add_parents(archive, name)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _add_parents(archive: tarfile.TarFile, name: str) -> None:
    parts = name.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        parent = "/".join(parts[:depth])
        if parent not in ("sb", "sb/in", "sb/out"):
            info = tarfile.TarInfo(parent)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(info)


def _tls_standins(doc: dict) -> dict[str, bytes]:
    """Throw-away PEM files at the paths extenders' tlsConfig names (archive name -> content).

    Those files live in the pod (a mounted Secret), not here; the binary opens
    them while building extenders, so validation puts a generated CA, cert and
    key at the same paths. What is checked is the configuration, not the files.
    """
    wanted = {}
    for ext in doc.get("extenders") or []:
        tls = (ext or {}).get("tlsConfig") or {}
        for key, role in (("caFile", "ca"), ("certFile", "cert"), ("keyFile", "key")):
            if isinstance(tls.get(key), str) and tls[key].startswith("/"):
                wanted[tls[key]] = role
    if not wanted:
        return {}
    pems = pki.self_signed_pems()
    files = {}
    for target, role in sorted(wanted.items()):
        files[target.lstrip("/")] = pems[role]
        log(f"    {target}: a generated stand-in (the pod must provide the real {role})")
    return files


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


BATCHING_CACHE = "batching"  # under the cache directory; `clean` knows it by this name


def batching_summary_path(cache_root: Path, depends_on: str, config: str) -> Path:
    """Where build's batching summary is kept: per what the verdict depends on besides the configuration
    (config/batching_key.py) and the configuration with its gate flags."""
    return Path(cache_root) / BATCHING_CACHE / hashlib.sha256(f"{depends_on}\0{config}".encode()).hexdigest()


def batching_summary(binary: Path, depends_on: Callable[[], str], config: str, image: str, k8s_version: str,
                     cache_root: Path, gates: dict[str, bool] | None = None) -> list[str]:
    """One line per profile: does it keep opportunistic batching, as the binary says while building its
    profiles (config.batching); before them, what it says of the spec's feature gates (config.feature_gates).
    For `build`'s summary: never raises, says why when it cannot tell.

    What the configuration alone decides (extenders, a release without the gate) needs no key and no run.
    Otherwise the verdict is kept per `depends_on()` (the binary's digest, or batching_key.depends_on: what
    the verdict depends on, which a plugin edit of bodies and constants leaves alone), configuration and
    gates, so a rebuild that changed none of them starts no container for it."""
    flags = spec_mod.feature_gates_flag(gates or {})
    try:
        parsed = yaml.load(config, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # our own rendering
        gate = vocabulary.feature_gates(k8s_version, cache_root).get(batching.GATE)
        decided = batching.judge_static(parsed, gate)
        if decided is not None and not gates:  # extenders, or no gate: the binary need not run (a plugin edit's loop)
            return [v.line() for v in decided]
        seen = batching_summary_path(cache_root, depends_on(), "\0".join([config, *flags]))
        if seen.is_file():
            return seen.read_text().splitlines()
        verdict = validate_with_binary(binary, config, image, flags=flags)
        gate_lines = [("warning: " if v.refused else "") + v.line(k8s_version)
                      for v in feature_gates.judge_output(verdict.output, gates or {}) if v.refused or v.warning]
        if not verdict.ok:
            return gate_lines + [for_program(f"batching: not checked ({refusal_reason(verdict.output)}; "
                                             "see `inv config.validate`)")]
        judged = decided if decided is not None else batching.judge(verdict.output, parsed, gate)
        lines = gate_lines + [v.line() for v in judged]
        seen.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(seen, "\n".join(lines) + "\n")  # only a verdict the binary gave is kept
        return lines
    except (UserError, OSError) as exc:
        return [f"batching: not checked ({getattr(exc, 'message', exc)})"]


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
