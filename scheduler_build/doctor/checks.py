"""`inv doctor`: each prerequisite of a build, with the fix for each missing one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import socket
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.build import builder_image as builder
from scheduler_build import engine
from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build import kubeclient
from scheduler_build.deploy import apply, skew
from scheduler_build.cluster import containerd, network
from scheduler_build.resolve import gomod, goproxy, versions
from scheduler_build.errors import UserError

MIN_FREE_GIB = 10  # a kube-scheduler build: ~0.7 GB modules, ~0.4 GB vendor, ~2 GB Go cache


@dataclass(frozen=True)
class DoctorRequest:
    """What the checks look at, decided before any runs (inputs/doctor.py)."""

    cache_dir: Path
    goroot: str  # builder.goroot; empty: `go env GOROOT` of the host
    builder_image: str  # builder.image; empty: a golang:* or bootstrapped image
    registry: str  # empty: no registry is checked
    home: str  # $HOME, where Go keeps its caches
    gopath: str  # $GOPATH
    node: bool  # check what `cluster.up --node` needs instead
    kubeconfig: str  # empty: no version skew check
    spec_path: str  # the spec whose scheduler --kubeconfig judges


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def check_docker() -> Check:
    try:
        info = engine.connect(timeout=10).version()
        return Check("docker engine", True, f"{info.get('Version')} (API {info.get('ApiVersion')})")
    except Exception as exc:  # any failure means "no engine": report it, do not crash
        return Check("docker engine", False, f"not reachable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                     "install and start a Docker engine (Debian: apt-get install -y docker.io), or set DOCKER_HOST")


def check_go(request: DoctorRequest) -> Check:
    """Required: resolving, vendoring, scaffolding and SBOMs run the host's Go (PATH, else /usr/local/go)."""
    if not gotool.find():
        return Check("go toolchain", False, gotool.missing(), gotool.INSTALL_HINT)
    try:
        root, version = builder.host_go(request.goroot)
    except UserError as exc:
        return Check("go toolchain", False, exc.message, exc.hint or "")
    where = gotool.find()
    on_path = "" if shutil.which("go") == where else f" (not on PATH; using {where})"
    return Check("go toolchain", True, f"go{version} at {root}{on_path}")


def check_disk(request: DoctorRequest) -> Check:
    path = request.cache_dir
    probe = path
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free / 2**30
    ok = free >= MIN_FREE_GIB
    return Check("free disk", ok, f"{free:.1f} GiB free under {probe} (cache {path})",
                 f"free at least {MIN_FREE_GIB} GiB, or point paths.cache_dir elsewhere")


def check_builder(request: DoctorRequest, go_ok: bool) -> Check:
    configured = request.builder_image
    try:
        images = {tag for image in engine.connect(timeout=10).images() for tag in image.tags}
    except Exception:
        return Check("builder image", False, "cannot list images without the docker engine", "start the engine first")
    if configured:
        ok = configured in images
        return Check("builder image", ok, f"configured {configured} {'present' if ok else 'missing'}",
                     "docker load it, or clear builder.image to use a bootstrapped builder")
    local = sorted(tag for tag in images if tag.startswith(("golang:", builder.BOOTSTRAP_REPO + ":")))
    if local:
        return Check("builder image", True, "present: " + ", ".join(local))
    if go_ok and builder.find_static_busybox_or_none():
        return Check("builder image", True, "none yet; bootstrappable from the host Go (inv builder.bootstrap)")
    return Check("builder image", False, "no golang image and nothing to bootstrap one from",
                 "apt-get install -y busybox-static and install Go, then `inv builder.bootstrap`")


def check_registry(url: str) -> Check:
    hostport = url.split("/", 1)[0]
    host, _, port = hostport.partition(":")
    try:
        with socket.create_connection((host, int(port or 443)), timeout=5):
            pass
    except (OSError, ValueError) as exc:
        return Check("registry", False, f"{hostport} unreachable: {exc}", "start the registry or fix registry.url")
    return Check("registry", True, f"{hostport} answers")


def check_git() -> Check:
    ok = shutil.which("git") is not None
    return Check("git", ok, "present" if ok else "missing (image tags use the commit)", "apt-get install -y git", required=False)


def check_go_proxy() -> Check:
    """Resolving a minor and fetching modules need the Go module proxy (GOPROXY's first HTTP entry)."""
    urls = goproxy.proxy_urls()
    if not urls:
        return Check("go module proxy", False, f"GOPROXY={gotool.proxy_setting()!r} names no HTTP proxy",
                     "offline builds need an exact version (--k8s-version v1.36.3) whose modules Go's cache holds",
                     required=False)
    probe = f"{urls[0]}/{goproxy.KUBERNETES_PROBE}/@v/list"
    try:
        with urllib.request.urlopen(probe, timeout=15) as resp:
            resp.read(1)
    except (urllib.error.URLError, OSError) as exc:
        return Check("go module proxy", False, f"{urls[0]} unreachable: {getattr(exc, 'reason', exc)}", gotool.NETWORK_HINT)
    return Check("go module proxy", True, f"{urls[0]} answers")


def check_module_verification(values: dict[str, str] | None = None) -> Check:
    """Whether Go checks the modules it downloads against the checksum database (sum.golang.org): GOSUMDB=off,
    or GONOSUMDB / GOPRIVATE / GONOSUMCHECK patterns, switch that off for every module or those named.
    `values`: `go env` of those (read from the host's go when None)."""
    names = ("GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOSUMCHECK")
    if values is None:
        try:
            done = gotool.run(["env", "-json", *names], timeout=30)
            values = json.loads(done.stdout) if done.returncode == 0 else {}
        except (UserError, OSError, ValueError):
            values = {}
    off = ["GOSUMDB=off"] if values.get("GOSUMDB", "").strip() == "off" else []
    off += [f"{name}={values[name]}" for name in names[1:] if values.get(name, "").strip()]
    if off:
        return Check("module verification", False, "modules are not checked against the checksum database: "
                     + ", ".join(off), "unset them unless those modules are private (go env -u NAME, or the "
                     "environment); go.sum still pins what was downloaded before", required=False)
    return Check("module verification", True, f"checksum database {values.get('GOSUMDB') or 'sum.golang.org'}")


def check_cache(request: DoctorRequest) -> Check:
    """The cache directory (paths.cache_dir) must be writable: every stage keeps its inputs there."""
    path = request.cache_dir
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("cache dir", False, f"{path} not writable: {exc.strerror or exc}",
                     "make it writable, or point paths.cache_dir (SCHEDULER_BUILD_PATHS_CACHE_DIR) elsewhere")
    return Check("cache dir", True, f"{path} writable")


def check_home(request: DoctorRequest) -> Check:
    """Go needs HOME (its caches) or GOPATH/GOMODCACHE/GOCACHE set; a container or CI job may have none."""
    home, gopath = request.home, request.gopath
    if not home and not gopath:
        return Check("HOME/GOPATH", False, "neither HOME nor GOPATH is set (go has nowhere for its caches)",
                     "export HOME=/some/writable/dir (or GOPATH and GOCACHE)")
    where = Path(gopath or home)
    if where.exists() and not os.access(where, os.W_OK):
        return Check("HOME/GOPATH", False, f"{where} is not writable", "export HOME or GOPATH to a writable directory")
    return Check("HOME/GOPATH", True, f"{'GOPATH' if gopath else 'HOME'}={where}")


def served_minors_needs(cache_root: Path, goroot: str = "") -> tuple[list[str], bool]:
    """For each served Kubernetes minor (the proxy's listing), its go line and whether its Go is at
    hand: ([lines], every one at hand). Nothing is downloaded but each newest patch's go.mod."""
    local = toolchain.host(goroot)
    listed = goproxy.list_versions(versions.KUBERNETES_MODULE)
    newest = versions.newest_patches(listed)
    lines, ready = [], True
    for minor in versions.supported_minors(listed):
        required = gomod.parse(goproxy.fetch(versions.KUBERNETES_MODULE, newest[minor], "mod", cache_root)).go
        line = toolchain.need_line(minor, required, local.version, toolchain.cached_versions(toolchain.parse(required)))
        ready = ready and "not cached" not in line
        lines.append(line)
    return lines, ready


def check_minors_go(request: DoctorRequest) -> Check:
    """Which Go each served minor's go line needs, and whether it is the host's or cached (toolchain.py)."""
    try:
        lines, ready = served_minors_needs(request.cache_dir, request.goroot)
    except UserError as exc:
        return Check("go per minor", False, exc.message, exc.hint or "", required=False)
    return Check("go per minor", True, "; ".join(lines) if ready else "; ".join(lines) + " (needs the Go module proxy once)",
                 required=False)


def check_version_skew(kubeconfig: str, spec_path: str, cache_dir: Path) -> Check:
    """`doctor --kubeconfig`: the API server's version beside the spec's scheduler, under the skew policy."""
    try:
        server = apply.server_version(kubeclient.from_kubeconfig(kubeconfig))
    except UserError as exc:
        return Check("version skew", False, exc.message, exc.hint or "")
    pair = apply.skew_pair(spec_path, server, cache_dir)
    shown = f"scheduler {pair['scheduler'] or '?'}, API server {server}"
    if pair["ok"] is None:
        return Check("version skew", False, f"{shown}: {pair['reason']}", required=False,
                     fix=f"this API server takes a scheduler of {' or '.join(pair['allowed_scheduler_minors'])}")
    if not pair["ok"]:
        verdict = skew.verdict(pair["scheduler"], server)
        return Check("version skew", False, pair["reason"], skew.hint(verdict))
    return Check("version skew", True, f"{shown}: within the policy ({skew.POLICY})")


# Tools compiled from the Go module proxy the first time a task needs them (gotool.installed_programs):
# that first use waits for the compile (cosign took 5.7 minutes on a 2-core machine).
FIRST_USE_TOOLS = (
    ("cosign", "image.keygen/sign/verify"),
    ("containerd", "cluster.up --node"),
    ("coredns", "cluster.up --node"),
)


def check_tools(request: DoctorRequest) -> Check:
    """Which tools are compiled on first use, and, for those built here, how long that took."""
    tools = request.cache_dir / "tools"
    built, pending = [], []
    for name, used_by in FIRST_USE_TOOLS:
        found = sorted(tools.glob(f"{name}-*")) if tools.is_dir() else []
        took = [(d / gotool.BUILD_SECONDS).read_text().strip() for d in found if (d / gotool.BUILD_SECONDS).is_file()]
        if found:
            built.append(f"{name}" + (f" (took {took[-1]} s here)" if took else ""))
        else:
            pending.append(f"{name} by {used_by}")
    parts = ([f"built: {', '.join(built)}"] if built else []) + \
        ([f"compiled on first use (minutes each on a small machine): {', '.join(pending)}"] if pending else [])
    return Check("first-use tools", True, "; ".join(parts), required=False)


def run_all(request: DoctorRequest) -> list[Check]:
    """Every check a request asks for: a build's (or, with `node`, the node's), then the version skew."""
    if request.node:
        checks = node_checks(request.cache_dir)
    else:
        go = check_go(request)
        checks = [check_docker(), go, check_go_proxy(), check_module_verification(), check_home(request), check_cache(request),
                  check_disk(request), check_builder(request, go.ok), check_git(), check_tools(request)]
        if go.ok:
            checks.insert(2, check_minors_go(request))
        if request.registry:
            checks.append(check_registry(request.registry))
    if request.kubeconfig:
        checks.append(check_version_skew(request.kubeconfig, request.spec_path, request.cache_dir))
    return checks


# --- `inv doctor --node`: what `cluster.up --node` needs (self-contained; issue 12)

# containerd itself (and ctr, which replaces crictl, absent from bookworm) is built from the Go
# module proxy: see runtime_check.
NODE_BINARIES = (
    ("runc", containerd.RUNC, "apt-get install -y runc"),
    ("CNI plugins", "/usr/lib/cni/bridge", "apt-get install -y containernetworking-plugins"),
    ("iptables", "/usr/sbin/iptables", "apt-get install -y iptables"),
    ("ip6tables", "/usr/sbin/ip6tables", "apt-get install -y iptables"),
    ("conntrack", "/usr/sbin/conntrack", "apt-get install -y conntrack"),
)


def _cap_eff() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


_RUNTIME_VERSION = re.compile(r"\s(v?(\d+)\.(\d+)\.\d+)[~+\-\s]")
RUNTIME_CONFIG_SINCE = (2, 0)  # containerd answers CRI RuntimeConfig from 2.0 (1.38's kubelet needs it: KEP-4033)


def runtime_check(version_line: str) -> Check:
    """The node's container runtime and its version (from `containerd --version`); pure."""
    match = _RUNTIME_VERSION.search(version_line + " ")
    if not match:
        return Check("container runtime", False, version_line.strip() or "no version", "install containerd")
    version, major, minor = match.group(1).lstrip("v"), int(match.group(2)), int(match.group(3))
    if (major, minor) >= RUNTIME_CONFIG_SINCE:
        return Check("container runtime", True, f"containerd {version} (answers CRI RuntimeConfig)")
    return Check("container runtime", True, f"containerd {version}: no CRI RuntimeConfig, which the kubelet of "
                 "Kubernetes 1.38 needs (KEP-4033)", "containerd 2.0 or newer (docs/minors.md)", required=False)


def runc_check(version_output: str) -> Check:
    """runc's version beside the one the node's containerd is tested with; pure. An older runc
    ran every node test here (Debian's 1.1.5): said, not refused."""
    first = (version_output.strip().splitlines() or ["no version"])[0]
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", first)
    if not match:
        return Check("runc version", False, first, "apt-get install -y runc")
    version = match.group(0)
    tested = tuple(int(x) for x in containerd.RUNC_TESTED.split("."))
    if tuple(int(x) for x in match.groups()) >= tested:
        return Check("runc version", True, f"runc {version}")
    return Check("runc version", True, f"runc {version}: containerd {containerd.VERSION.lstrip('v')} is tested with "
                 f"{containerd.RUNC_TESTED}; {version} runs the node's pods here (docs/cluster.md)", required=False)


def node_runtime(cache_dir: Path) -> Check:
    """The containerd `cluster.up --node` runs: the cached build's own `--version`, else the pin."""
    built = containerd.build(cache_dir, cached_only=True)
    if not built:
        return Check("container runtime", True, f"containerd {containerd.VERSION.lstrip('v')} (answers CRI RuntimeConfig), "
                     "built from the Go module proxy by the first `cluster.up --node` (not cached yet)")
    proc = subprocess.run([str(built["containerd"]), "--version"], capture_output=True, text=True, timeout=30)
    return runtime_check(proc.stdout or proc.stderr)


def node_checks(cache_dir: Path) -> list[Check]:
    """Each node prerequisite; the ones this machine kind lacks are handled, and said so."""
    caps = _cap_eff()
    checks = [Check("root", os.geteuid() == 0, f"euid {os.geteuid()}", "run cluster.up --node as root")]
    checks.append(Check("CAP_NET_ADMIN + CAP_SYS_ADMIN", bool(caps >> 12 & 1 and caps >> 21 & 1), f"CapEff {caps:#x}",
                        "run with these capabilities (interfaces, iptables, mounts)"))
    checks.append(Check("CAP_SYS_RESOURCE", True, "present" if caps >> 24 & 1 else
                        "missing: handled, containerd runs with restrict_oom_score_adj = true", required=False))
    for name, path, fix in NODE_BINARIES:
        checks.append(Check(name, os.access(path, os.X_OK), path, fix))
    checks.append(node_runtime(cache_dir))
    if os.access(containerd.RUNC, os.X_OK):
        proc = subprocess.run([containerd.RUNC, "--version"], capture_output=True, text=True, timeout=30)
        checks.append(runc_check(proc.stdout))
    cgroup_v1 = Path("/sys/fs/cgroup/memory").is_dir()
    checks.append(Check("cgroups", cgroup_v1 or Path("/sys/fs/cgroup/cgroup.controllers").is_file(),
                        "v1: handled with failCgroupV1: false" if cgroup_v1 else "v2", "mount cgroups"))
    init = Path("/proc/1/comm").read_text().strip()
    checks.append(Check("init system", True, f"{init}: " + ("systemd" if init == "systemd" else
                        "no systemd, handled with cgroupDriver: cgroupfs"), required=False))
    overlay = "overlay" in Path("/proc/filesystems").read_text()
    checks.append(Check("overlayfs", overlay, "in /proc/filesystems" if overlay else "missing", "modprobe overlay"))
    try:
        network.check_ranges()
        checks.append(Check("address ranges", True, f"pods {network.POD_CIDR}, node {network.NODE_CIDR}: no overlap"))
    except UserError as exc:
        checks.append(Check("address ranges", False, exc.message, exc.hint or ""))
    return checks
