"""Scheduler configuration and manifests from the build spec, and their validation.

- `render(spec, out, image=...)`: the KubeSchedulerConfiguration
  (kubescheduler.config.k8s.io/v1) plus every object that runs it as a second
  scheduler, written atomically as one directory with a kustomization.yaml.
- `in_tree_plugins(version)`: the plugin names built into that Kubernetes
  version, read from its own source (names.go), never from a hand-kept list.
- `validate_with_binary(binary, config)`: the real kube-scheduler's validation
  mode (`--config F --write-config-to OUT`) in a throw-away container of the
  builder image with no network; its own error text is shown on refusal.

Templates live in templates/config/; every value goes through `tojson` and the
rendered text is parsed and dumped again by yaml.safe_dump (sorted keys), so the
output is deterministic and no YAML is ever assembled by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build import gotool
from scheduler_build.errors import UserError
from scheduler_build.atomic import publish_dir, write_atomic
from scheduler_build.progress import log, phase
from scheduler_build.spec import Spec
from scheduler_build.templating import render as render_template

CONFIG_FILE = "kube-scheduler-config.yaml"
MANAGED_BY = "scheduler-build"


# --- YAML output -----------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """safe_dump with block literals for multi-line strings (the ConfigMap's config)."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_representer)


def dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=100)


def dump_all(docs: list[Any]) -> str:
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True,
                         width=100, explicit_start=True)


def _docs(template: str, **context: Any) -> list[Any]:
    """Render a template and parse it back: the serializer, not the template, writes the YAML."""
    text = render_template(f"config/{template}", **context)
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


# --- names -----------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    configmap: str
    config_key: str
    service_account: str
    lease_role: str
    extender: str


def names_for(spec: Spec) -> Names:
    return Names(
        configmap=f"{spec.name}-config",
        config_key="config.yaml",
        service_account=spec.name,
        lease_role=f"{spec.name}-leader-election",
        extender=spec_mod.reference_extender_name(spec),
    )


def image_ref(spec: Spec, k8s_version: str) -> str:
    """The scheduler image: the spec's repository with its tag (default <k8s-version>-<version>)."""
    tag = spec.image.tag or spec_mod.default_image_tag(spec, k8s_version)
    return f"{spec.image.repository}:{tag}"


# --- rendering -------------------------------------------------------------


def config_text(spec: Spec) -> str:
    """The KubeSchedulerConfiguration YAML for the spec (extenders include the reference one)."""
    (doc,) = _docs("kube-scheduler-config.yaml.j2", spec=spec, extenders=spec.all_extenders())
    return dump(doc)


def render_files(spec: Spec, image: str) -> dict[str, str]:
    """Every output file name -> content. Pure: the same spec gives the same bytes."""
    names = names_for(spec)
    config = config_text(spec)
    labels = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/component": "scheduler",
              "app.kubernetes.io/managed-by": MANAGED_BY}
    selector = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/component": "scheduler"}
    context = dict(spec=spec, names=names, labels=labels, selector=selector, config_text=config,
                   config_sha256=hashlib.sha256(config.encode()).hexdigest(), image=image,
                   config_mount=f"/etc/kubernetes/{spec.name}")
    files: dict[str, str] = {CONFIG_FILE: config}
    resources: list[str] = []

    def add(name: str, template: str, **extra: Any) -> None:
        files[name] = dump_all(_docs(template, **context, **extra))
        resources.append(name)

    # kube-system and default exist in every cluster; any other namespace is ours to create.
    if spec.namespace not in ("kube-system", "default"):
        add("namespace.yaml", "namespace.yaml.j2")
    add("serviceaccount.yaml", "serviceaccount.yaml.j2")
    add("rbac.yaml", "rbac.yaml.j2")
    add("configmap.yaml", "configmap.yaml.j2")
    add("deployment.yaml", "deployment.yaml.j2")
    if spec.reference_extender.enabled:
        ext_labels = {"app.kubernetes.io/name": names.extender, "app.kubernetes.io/component": "extender",
                      "app.kubernetes.io/part-of": spec.name, "app.kubernetes.io/managed-by": MANAGED_BY}
        ext_selector = {"app.kubernetes.io/name": names.extender, "app.kubernetes.io/component": "extender"}
        add("extender.yaml", "extender.yaml.j2", extender_labels=ext_labels, extender_selector=ext_selector)
    (kustomization,) = _docs("kustomization.yaml.j2", resources=resources)
    files["kustomization.yaml"] = dump(kustomization)
    return files


RENDERED_NAMES = {CONFIG_FILE, "namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml",
                  "deployment.yaml", "extender.yaml", "kustomization.yaml"}


def render(spec: Spec, out: Path, image: str) -> dict[str, str]:
    """Write the rendered files to `out` in one step (a symlink swap: old tree or new, never a mix).

    Refuses to replace a directory holding anything but a previous rendering, so
    `--out .` can never wipe a checkout.
    """
    out = Path(out)
    files = render_files(spec, image)
    if out.exists() and not out.is_symlink():
        if not out.is_dir():
            raise UserError(f"--out {out} exists and is not a directory", "choose a new directory")
        foreign = sorted(p.name for p in out.iterdir() if p.name not in RENDERED_NAMES)
        if foreign:
            raise UserError(f"--out {out} holds files this task did not write ({', '.join(foreign[:3])})",
                            "render into a new or previously rendered directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        for name, text in files.items():
            write_atomic(staging / name, text, mode=0o644)
        os.chmod(staging, 0o755)
        # Named after the content: re-rendering the same spec keeps the published tree.
        publish_dir(staging, out, f"r{digest}")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files


# --- in-tree plugin names of a version -------------------------------------

_CONST = re.compile(r'^\s*([A-Z][A-Za-z0-9_]*)\s*=\s*"([^"]+)"', re.M)
NAMES_GO = "pkg/scheduler/framework/plugins/names/names.go"


def parse_names_go(text: str) -> set[str]:
    """The string constants of names.go: one per in-tree plugin of that version."""
    return {value for _, value in _CONST.findall(text)}


def kubernetes_source(version: str) -> Path:
    """The k8s.io/kubernetes source of `version` in the Go module cache (downloaded if absent)."""
    return gotool.module_dir("k8s.io/kubernetes", version)


def in_tree_plugins(version: str, cache_root: Path) -> frozenset[str]:
    """In-tree plugin names of an exact version (v1.36.3), cached per version."""
    cached = cache_root / "intree-plugins" / f"{version}.json"
    if cached.is_file():
        return frozenset(json.loads(cached.read_text()))
    source = kubernetes_source(version) / NAMES_GO
    if not source.is_file():
        raise UserError(f"k8s.io/kubernetes@{version} has no {NAMES_GO}",
                        "this toolkit supports versions whose in-tree plugins are named there (1.19+)")
    names = parse_names_go(source.read_text())
    if not names:
        raise UserError(f"found no plugin names in {source}", "the file layout changed: report this")
    write_atomic(cached, json.dumps(sorted(names), indent=1))
    return frozenset(names)


# --- the real binary's verdict ---------------------------------------------

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
    from scheduler_build import engine as engine_mod  # the engine only when the binary validates

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
            config = dump(doc)
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
            engine_mod.Mount("/sb/kube-scheduler", str(binary), read_only=True),
            engine_mod.Mount("/sb/in", str(work), read_only=True),
            engine_mod.Mount("/sb/out", str(work / "out")),
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


def _tls_standins(doc: dict, work: Path) -> list[Any]:
    """Throw-away PEM files at the paths extenders' tlsConfig names.

    Those files live in the pod (a mounted Secret), not here; the binary opens
    them while building extenders, so validation mounts a generated CA, cert and
    key at the same paths. What is checked is the configuration, not the files.
    """
    from scheduler_build.engine import Mount

    wanted = {}
    for ext in doc.get("extenders") or []:
        tls = (ext or {}).get("tlsConfig") or {}
        for key, role in (("caFile", "ca"), ("certFile", "cert"), ("keyFile", "key")):
            if isinstance(tls.get(key), str) and tls[key].startswith("/"):
                wanted[tls[key]] = role
    if not wanted:
        return []
    pems = _self_signed_pems()
    mounts = []
    for index, (target, role) in enumerate(sorted(wanted.items())):
        local = work / f"standin-{index}.pem"
        local.write_bytes(pems[role])
        os.chmod(local, 0o644)
        mounts.append(Mount(target, str(local), read_only=True))
        log(f"    {target}: a generated stand-in (the pod must provide the real {role})")
    return mounts


def _self_signed_pems() -> dict[str, bytes]:
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scheduler-build-validate")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return {"ca": cert_pem, "cert": cert_pem, "key": key_pem}


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


def builder_image(engine: Any = None) -> str:
    """The newest local `scheduler-build/golang:*` image (bootstrapped by `inv builder.bootstrap`)."""
    from scheduler_build.build import builder_image as builder
    from scheduler_build import engine as engine_mod

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


_PLUGIN_DIR = re.compile(r"^pkg/scheduler/framework/plugins/[^/]+/[^/]+\.go$")
_ADDED_NAME = re.compile(r'^\+\s*(?:const\s+)?Name\s*=\s*"([^"]+)"')
_ADDED_NAMES_GO = re.compile(r'^\+\s*[A-Z][A-Za-z0-9_]*\s*=\s*"([^"]+)"')


def patched_plugin_names(patches: list[Path] | tuple[Path, ...]) -> set[str]:
    """Plugin names a patch series adds to the in-tree registry.

    A patch that registers an in-tree plugin touches plugins/registry.go and
    adds a package under pkg/scheduler/framework/plugins/ declaring `Name = "..."`
    (or a constant in names/names.go). Only series that touch registry.go count:
    a name that is never registered would still be refused by the binary.
    """
    names: set[str] = set()
    registers = False
    for patch in patches:
        target = ""
        for line in Path(patch).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("+++ "):
                target = line[4:].split("\t", 1)[0].strip()
                target = target[2:] if target.startswith("b/") else target
                target = target.split("k8s.io/kubernetes/", 1)[-1]
                registers = registers or target.endswith("pkg/scheduler/framework/plugins/registry.go")
                continue
            if not line.startswith("+") or target.endswith("_test.go"):
                continue
            if target.endswith("plugins/names/names.go"):
                match = _ADDED_NAMES_GO.match(line)
            elif _PLUGIN_DIR.match(target):
                match = _ADDED_NAME.match(line)
            else:
                match = None
            if match:
                names.add(match.group(1))
    return names if registers else set()


def check_fields(spec: Spec, k8s_version: str, cache_root: Path) -> frozenset[str]:
    """The field-by-field half of `inv config.validate` beyond `spec.load`: plugin names.

    Known names: the version's in-tree plugins, those the spec's patch series
    registers in-tree, and those the spec's out-of-tree plugins register.
    """
    with phase("plugins", f"in-tree names of Kubernetes {k8s_version}"):
        known = set(in_tree_plugins(k8s_version, cache_root))
        patched = patched_plugin_names(spec.patches)
        known |= patched
        log(f"    {len(known) - len(patched)} in-tree plugins, {len(patched)} added by patches"
            f"{' (' + ', '.join(sorted(patched)) + ')' if patched else ''}, {len(spec.plugin_names)} from the spec's plugins")
    spec_mod.check_plugin_names(spec, frozenset(known), k8s_version)
    return frozenset(known)
