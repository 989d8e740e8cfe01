"""Option resolution: flag, then invoke config (invoke.yaml, env vars), then default.

Invoke's own configuration system does the loading (project invoke.yaml, the
user's files, environment variables with the program's prefix); this module only
reads the merged result so every task resolves options the same way.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import errors
from scheduler_build.errors import UserError
from scheduler_build.extender.config import settings_rows as extender_settings

@dataclass(frozen=True)
class Kind:
    """What a setting's text must be, beyond its default's type (options.convert reads it)."""

    name: str  # int, float, duration, size, enum, version, port
    lo: float | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    """One setting, declared once: its key, default, help, kind and flag. Everything else comes from
    here: DEFAULTS (registered with invoke), the environment variables (env_vars), the value's
    checks (options.convert), `help settings`, docs/settings.md and the flags' help (flag_help)."""

    key: str  # section.key; the environment variables are INVOKE_/SCHEDULER_BUILD_SECTION_KEY
    default: Any
    help: str  # what it means; "empty: ..." says what an empty value means
    kind: Kind | None = None  # None: the default's type (bool, int, float, str)
    flag: str | None = ""  # the task flag that overrides it; empty: --<key's last part>; None: no flag

    @property
    def flag_name(self) -> str:
        """The flag, or "" for a setting no task has a flag for."""
        if self.flag is None:
            return ""
        return self.flag or "--" + self.key.rsplit(".", 1)[-1].replace("_", "-")


# How to add a setting: one row here (key, default, help; kind and flag when the default's type and the
# key's last part do not say them). Then read it in the task with option(c, "section.key", flag) (with
# spec=... when the spec can say it too), give the flag help=flag_help("section.key"), and run
# `python -m scheduler_build.settings --update docs/settings.md`. Nothing else restates the default.
SETTINGS: tuple[Setting, ...] = (
    Setting("k8s.version", "1.36", 'Kubernetes version: a minor ("1.36") resolves to its newest patch, "latest" to the '
            "newest release", Kind("version"), "--k8s-version"),
    Setting("paths.cache_dir", "", "downloads, resolved versions, builders' state; "
            "empty: $XDG_CACHE_HOME/scheduler-build or ~/.cache/scheduler-build", flag=None),
    Setting("paths.dist_dir", "dist", "output root: dist/<name>/<k8s-version>/<os>-<arch>/, dist/config/<name>/, "
            "image layouts", flag="--dist"),
    Setting("builder.image", "", "the golang image builds run in; empty: official golang:<go> if present or "
            "pullable, else bootstrapped", flag="--builder-image"),
    Setting("builder.pull", True, "try pulling the official golang image before falling back", flag="--no-pull"),
    Setting("builder.goroot", "", "the Go a bootstrapped builder copies; empty: `go env GOROOT` of the host"),
    Setting("builder.go", "", "an exact Go release to build with, e.g. 1.27.3 (Go's toolchain module from the Go module "
            "proxy when the host has another); empty: the host's Go, or the newest patch of the go line's minor"),
    Setting("build.name", "", "dist/<name>/... directory name; the spec's name wins; empty: the component name"),
    Setting("build.component", "kube-scheduler", "what `inv build` compiles without a spec (kube-scheduler, "
            "kube-apiserver)"),
    Setting("build.os", "linux", "target GOOS (builds are linux-only)", Kind("enum", choices=("linux",))),
    Setting("build.arch", "", "target architecture; empty: the host's"),
    Setting("build.cgo_static", False, "compile with cgo, statically linked (needs gcc in the builder)"),
    Setting("build.source_date_epoch", "", "build date stamp in seconds; empty: $SOURCE_DATE_EPOCH, else the "
            "release's commit time (a binary)"),
    Setting("build.version_suffix", "", "appended to the stamped version: v1.36.3-<suffix>; the spec's "
            "versionSuffix wins"),
    Setting("build.gocache_volume", "", "Docker volume holding Go's build cache (`inv clean --volume` removes it); "
            "empty: scheduler-build-gocache-u<uid>, each user of an engine their own"),
    Setting("build.reuse_builder", "auto", "compile by `docker exec` in a long-lived builder (build/warm.py), "
            "which keeps running until idle; auto: on for an engine on this machine (a unix socket), off for a remote one",
            Kind("enum", choices=("auto", "true", "false")), flag=None),
    Setting("build.builder_idle_timeout", "30m", "a long-lived builder no build used for this long exits and is "
            "removed (its Go cache stays in the volume)", Kind("duration", lo=1), flag=None),
    Setting("build.builder_cap", 4, "the most long-lived builders of yours kept on an engine: starting one more "
            "removes the oldest idle ones", Kind("int", lo=1), flag=None),
    Setting("build.all_platforms", False, "with a spec, build every platform it lists, not just the host's"),
    Setting("build.cache_from", "", "registry repository to pull the workspace image and Go build cache from "
            "(docs/remote-engine.md)"),
    Setting("build.cache_to", "", "registry repository to push the workspace image and Go build cache to "
            "(the engine pushes)"),
    Setting("build.debuggable", False, "compile the recorder in: each pod's per-plugin results as annotations, "
            "read by `explain` (docs/explain.md); the spec's debuggable.enabled turns it on too"),
    Setting("build.pgo", "", "a CPU profile (pprof) to compile kube-scheduler with: Go's profile-guided "
            "optimisation, `go build -pgo` (docs/build.md); the spec's pgo field wins; empty: none"),
    Setting("cluster.state_dir", "", "the local cluster's files (certificates, kubeconfigs, data, logs, "
            "pids); empty: <cache_dir>/cluster"),
    Setting("cluster.apiserver", "", "kube-apiserver binary; empty: build kube-apiserver of k8s.version with our "
            "own build"),
    Setting("cluster.etcd", "/usr/bin/etcd", "etcd binary (Debian's etcd-server)"),
    Setting("cluster.timeout", 180, "seconds for each process to become ready (a loaded 2-core machine)",
            Kind("duration", lo=1)),
    Setting("cluster.registries", "", "with --node: registries the node pulls from, http(s)://HOST:PORT "
            "(the setting: comma-separated; the flag: repeated)", flag="--registry"),
    Setting("cluster.registry_ca", "", "with --node: CA bundle for the https registries; empty: the engine's "
            "/etc/docker/certs.d/<host:port>/ca.crt, else the system's"),
    Setting("image.platforms", "", "comma-separated platforms; the spec's platforms win; empty: the host's"),
    Setting("image.version", "0.1.0", "the spec version in the tag <k8s-version>-<version>; the spec's version "
            "wins", Kind("version")),
    Setting("image.repository", "", "local image repository; the spec's image.repository wins; empty: "
            "scheduler-build/<name>"),
    Setting("image.licenses", "Apache-2.0", "org.opencontainers.image.licenses (Kubernetes' licence)", flag=None),
    Setting("image.source", "", "org.opencontainers.image.source; empty: git's origin URL", flag=None),
    Setting("image.force", False, "rebuild the image layout even when its inputs are unchanged"),
    Setting("image.extender_tag", "", "the reference extender's image tag; empty: "
            "scheduler-build/extender:<toolkit version>", flag="--tag"),
    Setting("image.debian_mirror", "http://deb.debian.org/debian", "debootstrap's mirror for the extender's base",
            flag="--mirror"),
    Setting("push.retries", 4, "retries per request, on connection errors, 5xx and 429", Kind("int", lo=0)),
    Setting("push.backoff", 0.5, "first retry delay in seconds, doubled per retry, capped at 8",
            Kind("duration", lo=0), flag=None),
    Setting("push.insecure", False, "allow plain HTTP to non-loopback registries (loopback ones may always)"),
    Setting("push.ca_cert", "", "CA bundle for the registry's TLS; empty: /etc/docker/certs.d/<host:port>/ca.crt, "
            "else the system CAs"),
    Setting("spec.path", "scheduler.yaml", "the build spec every stage reads (build, image, config, deploy, cluster, "
            "dev, release); `init` writes one", flag="--spec"),
    Setting("buildspec.path", "", "deprecated alias of spec.path (read with a warning)", flag="--spec"),
    Setting("buildspec.all_platforms", False, "deprecated alias of build.all_platforms (read with a warning)",
            flag="--all-platforms"),
    Setting("scaffold.k8s_version", "", "Kubernetes version a new plugin targets; empty: k8s.version",
            Kind("version"), "--k8s-version"),
    Setting("scaffold.force", False, "in a non-empty --out, replace the files an earlier scaffold wrote (never "
            "others, never .git)"),
    Setting("config.spec", "", "deprecated alias of spec.path (read with a warning)", flag="--spec"),
    Setting("config.out", "", "where config.render writes; empty: <paths.dist_dir>/config/<name>"),
    Setting("config.runner_image", "", "image config.validate runs the binary in; empty: the newest local "
            "scheduler-build/golang:* (no network)", flag=None),
    Setting("config.scheduler_name", "default-scheduler", "migrate-policy's profile name"),
    Setting("config.fields_only", False, "`config.validate` checks fields only, without the binary"),
    Setting("config.require_batching", False, "`config.validate` fails when a profile loses opportunistic batching "
            "(a plugin without SignPod, an extender): for CI"),
    Setting("deploy.kubeconfig", "", "kubeconfig file of deploy, explain, dev.run and doctor; empty: $KUBECONFIG (its "
            "first file)"),
    Setting("deploy.context", "", "kubeconfig context; empty: its current-context"),
    Setting("deploy.timeout", 300, "seconds to wait for the Deployment to become available", Kind("duration", lo=1)),
    Setting("deploy.no_wait", False, "do not wait for the Deployment to become available"),
    Setting("deploy.allow_version_skew", False, "deploy a scheduler outside Kubernetes' skew policy with the API "
            "server"),
    Setting("sign.key", "", "image.push --sign: the private key, DIR/cosign.key or env://VAR", flag="--key"),
    Setting("sign.public_key", "", "image.verify: the public key, DIR/cosign.pub or env://VAR", flag="--key"),
    Setting("sign.password", "", "the key's password when COSIGN_PASSWORD is unset (empty: image.keygen wants "
            "--allow-empty-password)", flag=None),
    Setting("registry.url", "", "HOST[:PORT]/REPO image.push pushes to; checked by `inv doctor` when set",
            flag="--registry"),
    # `inv extender.serve`; the console script scheduler-extender takes the same as flags. Their defaults'
    # home is the extender's ServeConfig (the extender image has no settings module).
    *extender_settings(Setting, Kind),
)
BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def _nested(rows: tuple[Setting, ...]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for row in rows:
        section, key = row.key.split(".", 1)
        tree.setdefault(section, {})[key] = row.default
    return tree


# Every setting's default as invoke's nested config (registered on the root collection; invoke merges
# files and environment variables over them; env vars only reach keys listed here). Derived, never edited.
DEFAULTS: dict[str, Any] = _nested(SETTINGS)


def setting(dotted: str) -> Setting:
    """One setting's declaration (KeyError for an unknown key)."""
    return BY_KEY[dotted]


def flag_help(dotted: str, otherwise: str = "", *, before: str = "", after: str = "", spec: str = "") -> str:
    """A flag's help from its setting's declaration: the setting's help and its default, the one text of
    every task's flag for it. A task may only frame it: `before` ("with --rebuild: "), `after` (what the
    flag means in that task), `spec` (the spec's field that wins over the setting, e.g. "name").
    tests/unit/settings/test_settings.py holds every setting-backed flag of every task to this."""
    return f"{before}{setting(dotted).help}{after} ({describe(dotted, otherwise, spec)})"


# Deprecated key -> its replacement. An alias is read when set (invoke.yaml, env) and
# its replacement is not, with a one-line warning; two that disagree are an error.
ALIASES: dict[str, str] = {
    "buildspec.path": "spec.path",
    "config.spec": "spec.path",
    "buildspec.all_platforms": "build.all_platforms",
}
_warned: set[str] = set()


def get(config: Any, dotted: str, flag: Any = None) -> Any:
    """One option without a spec: an explicit flag wins, then invoke config (environment over files),
    then DEFAULTS. Tasks decide through precedence.decide, which adds the spec and calls this."""
    if flag is not None:
        return flag
    value = lookup(config, dotted)
    aliases = [old for old, new in ALIASES.items() if new == dotted]
    if aliases:
        value = _from_aliases(config, dotted, value, aliases)
    return value


def lookup(config: Any, dotted: str) -> Any:
    """The merged value of one setting (files, environment), else its default; aliases not consulted."""
    node: Any = config
    for part in dotted.split("."):
        try:
            node = node[part]
        except (KeyError, TypeError):
            return default(dotted)
    return default(dotted) if node is None else node


def invoke_defaults(node: dict = DEFAULTS) -> dict:
    """DEFAULTS as registered with invoke: every key, with None for booleans and numbers.

    invoke casts an environment variable to its default's type, reading a boolean as "anything but
    0 or empty is true" (FOO=false would be true). Registered as None, the text arrives as written
    and options.convert reads it strictly, like every other value; get() answers the default for None."""
    return {key: invoke_defaults(value) if isinstance(value, dict) else (value if isinstance(value, str) else None)
            for key, value in node.items()}


def _from_aliases(config: Any, dotted: str, value: Any, aliases: list[str]) -> Any:
    """The value of `dotted`, or of a deprecated alias set in its place."""
    chosen = {}
    for old in aliases:
        old_value = lookup(config, old)
        if old_value != default(old):
            if old not in _warned:
                _warned.add(old)
                print(f"warning: setting {old} is deprecated, use {dotted}", file=sys.stderr, flush=True)
            chosen[old] = old_value
    if value != default(dotted):
        chosen[dotted] = value
    if len(set(map(str, chosen.values()))) > 1:
        given = ", ".join(f"{key}={val!r}" for key, val in chosen.items())
        raise UserError(f"conflicting settings: {given}", f"set only {dotted} (the others are deprecated aliases)")
    return next(iter(chosen.values())) if chosen else value


def default(dotted: str) -> Any:
    """The default of one setting, from its declaration (KeyError for an unknown key)."""
    return BY_KEY[dotted].default


def describe(dotted: str, otherwise: str = "", spec: str = "") -> str:
    """`default: <key> = <value>` for help texts, so they never restate a default.

    An empty default reads `default: <key>, else <otherwise>` (what empty means); with `spec` (a spec
    field that wins over the setting): `default: the spec's <spec>, else <key> ...`."""
    head = f"default: the spec's {spec}, else " if spec else "default: "
    value = default(dotted)
    if value == "" or value is None:
        return f"{head}{dotted}" + (f", else {otherwise}" if otherwise else "")
    if isinstance(value, bool):
        shown = "on" if value else "off"
    elif isinstance(value, int) and value >= 1024 * 1024 and value % (1024 * 1024) == 0:
        shown = f"{value // (1024 * 1024)} MiB"
    elif isinstance(value, float):
        shown = f"{value:g}"
    else:
        shown = str(value)
    return f"{head}{dotted} = {shown}"


DEFAULT_GOCACHE_VOLUME = "scheduler-build-gocache"


def gocache_volume(configured: str | None) -> str:
    """The Go build-cache volume: the one configured, else the caller's own (by uid: on a shared engine
    no two users share a cache, its builders or what they compiled)."""
    return configured or f"{DEFAULT_GOCACHE_VOLUME}-u{os.getuid()}"


def cache_dir(config: Any = None) -> Path:
    configured = get(config, "paths.cache_dir") if config is not None else ""
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "scheduler-build"


# --- the settings reference in docs/settings.md, generated from DEFAULTS (`python -m scheduler_build.settings`)

REFERENCE_BEGIN = "<!-- settings-reference: generated by `python -m scheduler_build.settings --update docs/settings.md` -->"
REFERENCE_END = "<!-- /settings-reference -->"


def leaves() -> list[tuple[str, Any]]:
    """Every setting as (dotted key, default), in the table's order."""
    return [(row.key, row.default) for row in SETTINGS]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    return '`""`' if value == "" else f"`{value}`"


def shown_plain(value: Any) -> str:
    """A default as plain text (help topics): true/false, "" for empty."""
    return _shown(value).strip("`")


def env_vars(dotted: str) -> tuple[str, str]:
    """The environment variables of a setting under `inv` and under `scheduler-build`."""
    name = dotted.replace(".", "_").upper()
    return f"INVOKE_{name}", f"SCHEDULER_BUILD_{name}"


def reference_markdown() -> str:
    """The settings reference (docs/settings.md): every key, its default, meaning and environment variables."""
    rows = ["| key | default | meaning | flag | `inv` env var | `scheduler-build` env var |",
            "|---|---|---|---|---|---|"]
    for row in SETTINGS:
        dotted, value, meaning = row.key, row.default, row.help
        inv_var, sb_var = env_vars(dotted)
        meaning = errors.name_program(meaning, "scheduler-build")  # the page a pip user reads
        rows.append(f"| `{dotted}` | {_shown(value)} | {meaning.replace('|', '/')} | {f'`{row.flag_name}`' if row.flag_name else '-'} | `{inv_var}` "
                    f"| `{sb_var}` |")
    return "\n".join([REFERENCE_BEGIN, "", *rows, "", REFERENCE_END])


def update_readme(path: Path) -> bool:
    """Replace the generated reference between the markers; True when the file changed."""
    text = path.read_text()
    begin, end = text.index(REFERENCE_BEGIN), text.index(REFERENCE_END) + len(REFERENCE_END)
    updated = text[:begin] + reference_markdown() + text[end:]
    if updated != text:
        path.write_text(updated)
    return updated != text
