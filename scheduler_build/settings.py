"""Option resolution: flag, then invoke config (invoke.yaml, env vars), then default.

Invoke's own configuration system does the loading (project invoke.yaml, the
user's files, environment variables with the program's prefix); this module only
reads the merged result so every task resolves options the same way.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from pathlib import Path
from typing import Any

from scheduler_build import errors
from scheduler_build.errors import UserError
from scheduler_build.extender_config import settings_defaults as extender_defaults

# Defaults for every setting, registered on the root collection; invoke merges
# files and environment variables over them. Env vars only reach keys listed here.
DEFAULTS: dict[str, Any] = {
    "k8s": {
        # A minor ("1.36") resolves to its newest patch; "latest" to the newest release.
        "version": "1.36",
    },
    "paths": {
        "cache_dir": "",  # empty: $XDG_CACHE_HOME/scheduler-build or ~/.cache/scheduler-build
        "dist_dir": "dist",
    },
    "builder": {
        "image": "",  # empty: official golang:<go> if present or pullable, else bootstrapped
        "pull": True,  # try pulling the official image before falling back
        "goroot": "",  # empty: `go env GOROOT` of the host
    },
    "build": {
        "name": "",  # dist/<name>/...; empty: the component name
        "component": "kube-scheduler",
        "os": "linux",
        "arch": "",  # empty: the host's architecture
        "cgo_static": False,
        "source_date_epoch": "",  # empty: $SOURCE_DATE_EPOCH, else the release's commit time
        "version_suffix": "",
        "gocache_volume": "scheduler-build-gocache",
        "reuse_builder": False,  # compile by `docker exec` in a long-lived builder (build/warm.py), which keeps running
        "all_platforms": False,  # with a spec, build every platform it lists, not just the host's
        "cache_from": "",  # registry repository to pull the workspace image and Go build cache from (docs/remote-engine.md)
        "cache_to": "",  # registry repository to push the workspace image and Go build cache to (the engine pushes)
    },
    "cluster": {
        "state_dir": "",  # empty: <cache_dir>/cluster
        "apiserver": "",  # empty: build kube-apiserver of k8s.version with our own build
        "etcd": "/usr/bin/etcd",  # Debian's etcd-server
        "timeout": 180,  # seconds for each process to become ready (a loaded 2-core machine)
        "registries": "",  # --node: registries the node pulls from, comma-separated http(s)://HOST:PORT
        "registry_ca": "",  # --node: CA bundle for the https ones (empty: the engine's certs.d, else the system's)
    },
    "image": {
        "platforms": "",  # empty: the spec's platforms, else the host's
        "version": "",  # empty: the spec's version, else 0.1.0 (tag <k8s-version>-<version>)
        "repository": "",  # empty: the spec's image.repository, else scheduler-build/<name>
        "licenses": "Apache-2.0",  # org.opencontainers.image.licenses (Kubernetes' licence)
        "source": "",  # org.opencontainers.image.source; empty: git's origin URL
        "force": False,
        "extender_tag": "",  # empty: scheduler-build/extender:<toolkit version>
        "debian_mirror": "http://deb.debian.org/debian",  # debootstrap's mirror for the extender's base
    },
    "push": {
        "retries": 4,  # per request, on connection errors, 5xx and 429
        "backoff": 0.5,  # first delay in seconds, doubled per retry, capped at 8
        "insecure": False,  # allow plain HTTP to non-loopback registries
        "ca_cert": "",  # empty: /etc/docker/certs.d/<host:port>/ca.crt, else the system CAs
    },
    "spec": {
        # The build spec every stage reads (build, image, config, deploy); `init` writes one. `build`
        # and image.* with --no-spec, --k8s-version or --component build plain kube-scheduler.
        # (This checkout's invoke.yaml points `inv` at examples/underlay/scheduler.yaml.)
        "path": "scheduler.yaml",
    },
    "buildspec": {  # deprecated aliases (see ALIASES): read when set, with a warning
        "path": "",
        "all_platforms": False,
    },
    "scaffold": {
        "k8s_version": "",  # empty: k8s.version
        "force": False,  # replace a non-empty --out
    },
    "config": {
        "spec": "",  # deprecated alias of spec.path (see ALIASES)
        "out": "",  # empty: <paths.dist_dir>/config/<name>
        "runner_image": "",  # empty: the newest local scheduler-build/golang:* (runs the binary, no network)
        "scheduler_name": "default-scheduler",  # migrate-policy's profile name
        "fields_only": False,
        "require_batching": False,  # a profile without opportunistic batching fails config.validate
    },
    "deploy": {
        "kubeconfig": "",  # empty: $KUBECONFIG
        "context": "",
        "timeout": 300,  # seconds to wait for the Deployment to become available
        "no_wait": False,
    },
    "sign": {  # inv image.keygen / image.push --sign / image.verify (cosign, offline)
        "key": "",  # image.push --sign: the private key, DIR/cosign.key or env://VAR
        "public_key": "",  # image.verify: the public key, DIR/cosign.pub or env://VAR
        "password": "",  # the key's password when COSIGN_PASSWORD is unset (empty: image.keygen wants --allow-empty-password)
    },
    "registry": {
        "url": "",  # HOST[:PORT]/REPO, checked by `inv doctor` when set
    },
    # `inv extender.serve`; the console script scheduler-extender takes the same as flags.
    # Their home is the extender's ServeConfig (the extender image has no settings module).
    "extender": extender_defaults(),
}

# Deprecated key -> its replacement. An alias is read when set (invoke.yaml, env) and
# its replacement is not, with a one-line warning; two that disagree are an error.
ALIASES: dict[str, str] = {
    "buildspec.path": "spec.path",
    "config.spec": "spec.path",
    "buildspec.all_platforms": "build.all_platforms",
}
_warned: set[str] = set()


def get(config: Any, dotted: str, flag: Any = None) -> Any:
    """Resolve one option: an explicit flag wins, then invoke config, then DEFAULTS.

    The one place options are resolved (tasks call it through tasks._common.option)."""
    if flag is not None:
        return flag
    value = _lookup(config, dotted)
    aliases = [old for old, new in ALIASES.items() if new == dotted]
    if aliases:
        value = _from_aliases(config, dotted, value, aliases)
    return value


def _lookup(config: Any, dotted: str) -> Any:
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
        old_value = _lookup(config, old)
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
    """The default of one setting, from DEFAULTS (KeyError for an unknown key)."""
    node: Any = DEFAULTS
    for part in dotted.split("."):
        node = node[part]
    return node


def describe(dotted: str, otherwise: str = "") -> str:
    """`default: <key> = <value>` for help texts, so they never restate a default.

    An empty default reads `default: <key>, else <otherwise>` (what empty means)."""
    value = default(dotted)
    if value == "" or value is None:
        return f"default: {dotted}" + (f", else {otherwise}" if otherwise else "")
    if isinstance(value, bool):
        shown = "on" if value else "off"
    elif isinstance(value, int) and value >= 1024 * 1024 and value % (1024 * 1024) == 0:
        shown = f"{value // (1024 * 1024)} MiB"
    elif isinstance(value, float):
        shown = f"{value:g}"
    else:
        shown = str(value)
    return f"default: {dotted} = {shown}"


def cache_dir(config: Any = None) -> Path:
    configured = get(config, "paths.cache_dir") if config is not None else ""
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "scheduler-build"


# --- the settings reference in docs/settings.md, generated from DEFAULTS (`python -m scheduler_build.settings`)

REFERENCE_BEGIN = "<!-- settings-reference: generated by `python -m scheduler_build.settings --update docs/settings.md` -->"
REFERENCE_END = "<!-- /settings-reference -->"
_SECTION_LINE = re.compile(r'^    "(\w+)": \{')
_KEY_LINE = re.compile(r'^        "(\w+)": .*?(?:#\s*(.*))?$')
_COMMENT_LINE = re.compile(r"^\s+#\s*(.*)$")


# Meanings of the keys DEFAULTS carries no comment for (a key with a comment uses that).
_MEANINGS = {
    "paths.dist_dir": "output root: dist/<name>/<k8s-version>/<os>-<arch>/, dist/config/<name>/, image layouts",
    "build.component": "what `inv build` compiles without a spec (kube-scheduler, kube-apiserver)",
    "build.os": "target GOOS",
    "build.cgo_static": "compile with cgo, statically linked",
    "build.version_suffix": "appended to the stamped version: v1.36.3-<suffix>",
    "build.gocache_volume": "Docker volume holding Go's build cache (`inv clean --volume` removes it)",
    "image.force": "rebuild the image layout even when its inputs are unchanged",
    "config.fields_only": "`config.validate` checks fields only, without the binary",
    "config.require_batching": "`config.validate` fails when a profile loses opportunistic batching "
                               "(a plugin without SignPod, an extender): for CI",
    "deploy.context": "kubeconfig context; empty: its current-context",
    "deploy.no_wait": "do not wait for the Deployment to become available",
    "extender.one_write": "each response's head and body in one write; off: `inv extender.serve --no-one-write`, "
                          "`scheduler-extender --no-one-write`, or the `scheduler-build` variable set to 0",
}


def leaves(node: dict = DEFAULTS, prefix: str = "") -> list[tuple[str, Any]]:
    """Every setting as (dotted key, default), in the table's order."""
    out: list[tuple[str, Any]] = []
    for key, value in node.items():
        if isinstance(value, dict):
            out += leaves(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _comments() -> dict[str, str]:
    """The comment each key carries in DEFAULTS' source (same line, else the lines just above)."""
    found: dict[str, str] = {}
    section, above = "", []
    for line in inspect.getsource(sys.modules[__name__]).split("DEFAULTS: dict[str, Any] = {", 1)[1].splitlines():
        if line.startswith("}"):
            break
        if match := _SECTION_LINE.match(line):
            section, above = match.group(1), []
        elif match := _KEY_LINE.match(line):
            text = match.group(2) or " ".join(above)
            if text:
                found[f"{section}.{match.group(1)}"] = text
            above = []
        elif match := _COMMENT_LINE.match(line):
            above.append(match.group(1))
    return found


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
    comments = _comments()
    rows = ["| key | default | meaning | `inv` env var | `scheduler-build` env var |", "|---|---|---|---|---|"]
    for dotted, value in leaves():
        meaning = comments.get(dotted) or _MEANINGS.get(dotted, "")
        if dotted in ALIASES:
            meaning = f"deprecated alias of `{ALIASES[dotted]}`"
        elif dotted.startswith("extender.") and not meaning:
            meaning = f"`inv extender.serve --{dotted.split('.', 1)[1].replace('_', '-')}` (and `scheduler-extender`)"
        inv_var, sb_var = env_vars(dotted)
        meaning = errors.name_program(meaning, "scheduler-build")  # the page a pip user reads
        rows.append(f"| `{dotted}` | {_shown(value)} | {meaning.replace('|', '/')} | `{inv_var}` | `{sb_var}` |")
    return "\n".join([REFERENCE_BEGIN, "", *rows, "", REFERENCE_END])


def update_readme(path: Path) -> bool:
    """Replace the generated reference between the markers; True when the file changed."""
    text = path.read_text()
    begin, end = text.index(REFERENCE_BEGIN), text.index(REFERENCE_END) + len(REFERENCE_END)
    updated = text[:begin] + reference_markdown() + text[end:]
    if updated != text:
        path.write_text(updated)
    return updated != text


if __name__ == "__main__":
    if sys.argv[1:2] == ["--update"] and len(sys.argv) == 3:
        print("updated" if update_readme(Path(sys.argv[2])) else "up to date", file=sys.stderr)
    elif sys.argv[1:] == ["--markdown"]:
        print(reference_markdown())
    else:
        sys.exit("usage: python -m scheduler_build.settings --markdown | --update docs/settings.md")
