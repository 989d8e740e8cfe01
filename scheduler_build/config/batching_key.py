"""What `build`'s batching line depends on besides the configuration and feature gates: the key its
verdict is kept under (config/validate.py `batching_summary`), so that a plugin edit which leaves all of
it alone reuses the verdict instead of running the new binary again.

The binary decides batching per profile while it builds the profiles: extenders, and for each enabled
PreFilter, Filter, PreScore and Score plugin whether it implements SignPlugin (a type assertion on the
plugin's value, k8s.io/kubernetes pkg/scheduler/framework/runtime `computeBatchablePlugins`). Which
extension points a plugin is enabled at, under multiPoint, depends on its methods too. So the verdict
is a function of:

- the configuration and gates (the caller's part of the key);
- the in-tree plugins: the Kubernetes release, the patch series (a debuggable build's recorder included)
  and the dependencies' go.sum;
- the out-of-tree plugins: which modules, at which version, which packages and names register them, and
  their method sets, read two ways: the exported methods the linker kept for their packages (from the
  binary's function table: a method added, removed, or promoted through embedding shows there), and
  for a local plugin each exported method's signature (from the snapshot the compile read: the same
  name with a signature that no longer satisfies SignPlugin shows there).

Bodies and constants are in none of these: the edit of a plugin developer's loop keeps the key. What
the key cannot see: a factory that starts returning another of the module's types when both were
already compiled in with the same methods; `config.validate` always asks the binary itself.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from scheduler_build.build.info import BuildInfo
from scheduler_build.golang import symbols

FORMAT = "batching-key/1"  # bumped when what the key covers changes


def plugin_parts(info: BuildInfo, methods: list[str], headers: dict[str, list[str]]) -> list[str]:
    """The key's parts from the build's record, the binary's methods and local modules' headers (pure)."""
    parts = [FORMAT, info.kubernetes.version, info.patch_series_digest, info.vendor.go_sum_sha256,
             json.dumps(info.debuggable, sort_keys=True)]
    for plugin in sorted(info.plugins, key=lambda p: (p.module, p.package)):
        where = plugin.version if plugin.source == "module" else "local"
        parts.append(f"plugin {plugin.module}@{where} {plugin.package} {','.join(plugin.names)}")
        parts += [f"  {header}" for header in headers.get(plugin.module, [])]
    return parts + [f"method {name}" for name in methods]


def depends_on(binary: Path, info: BuildInfo, cache_root: Path) -> str:
    """The key: sha256 over `plugin_parts`. When the binary's function table or a local plugin's snapshot
    cannot be read it is the binary's own digest, as before: the verdict is then asked of the binary."""
    modules = sorted({p.module for p in info.plugins if p.module})
    try:
        methods = symbols.exported_methods(binary, modules)
        # A local plugin's snapshot: what the compile read, immutable (build/snapshot.py), not the tree
        # the user may be editing again already.
        headers = {p.module: symbols.module_method_headers(_snapshot(cache_root, p.sha256))
                   for p in info.plugins if p.source == "path"}
    except (OSError, ValueError):
        return info.binary.sha256
    text = "\n".join(plugin_parts(info, methods, headers))
    return hashlib.sha256(text.encode()).hexdigest()


def _snapshot(cache_root: Path, digest: str) -> Path:
    directory = Path(cache_root) / "plugins" / digest[:32]
    if not digest or not directory.is_dir():
        raise OSError(f"no snapshot {directory}")
    return directory
