"""API changes between two Kubernetes releases, derived mechanically with golang.org/x/exp/cmd/apidiff.

apidiff is `go install`ed once (pinned) into <cache>/tools/apidiff-<version>/. For each Kubernetes
package a plugin imports, `apidiff -w` writes its export data in the plugin module tidied for the old
release and for the target; `apidiff OLD NEW` lists what changed. A name removed from a package but
present in a same-named package of the target's k8s.io/kube-scheduler module (the framework's move in
1.34/1.35) is a move; comparing the old package with the new home gives the moved name's signature
changes. Parsing and classification are pure (`parse_report`, `moves_and_changes`).
"""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.errors import UserError
from scheduler_build.progress import log
from scheduler_build.retarget.in_builder import InBuilder

MODULE = "golang.org/x/exp"
VERSION = "v0.0.0-20261113113407-e3970619a1a4"
_CHANGE = re.compile(r"^- (\S+?): (.*)$")
_IDENT = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")
_CHANGED = re.compile(r"^changed from (.*) to (.*)$")


def _same_text(what: str) -> bool:
    """`changed from X to X`: apidiff's report of a type whose package moved but prints the same."""
    match = _CHANGED.match(what)
    return bool(match) and match.group(1) == match.group(2)


@dataclass(frozen=True)
class Change:
    package: str  # the old package's import path
    name: str  # Handle, ScorePlugin.Score
    what: str  # "moved to k8s.io/kube-scheduler/framework", "changed from ... to ...", "removed"
    home: str = ""  # the new package when moved

    @property
    def top(self) -> str:
        return self.name.split(".", 1)[0]

    def line(self) -> str:
        short = self.package.rsplit("/", 1)[-1]
        if self.what == "moved":
            return f"{short}.{self.name} -> {self.home}.{self.name}"
        if self.home:
            return f"{self.home}.{self.name}: {self.what}"
        return f"{short}.{self.name}: {self.what}"


def parse_report(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """apidiff's text report -> (incompatible, compatible), each [(name, what)]."""
    incompatible: list[tuple[str, str]] = []
    compatible: list[tuple[str, str]] = []
    current = incompatible
    for line in text.splitlines():
        if line.startswith("Incompatible changes"):
            current = incompatible
        elif line.startswith("Compatible changes"):
            current = compatible
        else:
            match = _CHANGE.match(line.strip())
            if match:
                current.append((match.group(1), match.group(2)))
    return incompatible, compatible


def moves_and_changes(package: str, used: set[str], same: str | None, homes: dict[str, str]) -> list[Change]:
    """Pure: the changes to the names a plugin uses from `package`, then the signature changes of the
    package's names those changes mention (a type the plugin never names, such as the factory type
    its registry's values must have).

    same: apidiff's report of old vs new `package` (None: the target has no such package);
    homes: candidate new homes (path -> report of old `package` vs that package). A used name
    removed from `package` and not removed in a home moved there; the home's report gives
    the moved name's own changes (a method's new signature)."""
    incompatible = parse_report(same)[0] if same is not None else []
    removed = {n for n, what in incompatible if what == "removed"} if same is not None else set(used)
    reports = {home: parse_report(text)[0] for home, text in sorted(homes.items())}
    out: list[Change] = []
    for name in sorted(used):
        if name not in removed:
            out += [Change(package, n, what) for n, what in incompatible if n.split(".", 1)[0] == name]
            continue
        home = next((h for h, changes in reports.items() if (name, "removed") not in changes), None)
        if home is None:
            out.append(Change(package, name, "removed"))
            continue
        out.append(Change(package, name, "moved", home))
        out += [Change(package, n, what, home) for n, what in reports[home] if n.split(".", 1)[0] == name]
    # one level further: a changed name the used names' changes mention (Registry's values are PluginFactory)
    mentioned = {word for change in out for word in _IDENT.findall(change.what)} - set(used)
    out += [Change(package, n, what) for n, what in incompatible
            if n in mentioned and what.startswith("changed")]
    return [change for change in out if not _same_text(change.what)]


def tool(cache_dir: Path) -> Path:
    """The pinned apidiff, built on first use and cached by version (gotool's one tool cache)."""
    return gotool.installed_tool(cache_dir, "apidiff", f"{MODULE}/cmd/apidiff", VERSION)


def export_data(builder: InBuilder, apidiff: Path, module_dir: Path, package: str, out: Path) -> bool:
    """`apidiff -w OUT PACKAGE` inside the module (its go.mod chooses the version) in the builder
    (the compile's container and build cache): the tool goes in and the export data comes out
    through the engine's archive API. False when the package is absent."""
    lines: list[str] = []
    code = builder.run(["/sb/apidiff", "-w", "/sb/out/export", package], module_dir, inputs=_tool_archive(apidiff),
                       outputs={"/sb/out/export": out}, on_line=lines.append)
    if code and lines:
        log(f"    {package}: {lines[-1]}")
    return code == 0 and out.is_file()


def _tool_archive(apidiff: Path) -> bytes:
    """/sb/apidiff (the static tool as built here: the engine must run this machine's architecture) and /sb/out."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in ("sb", "sb/out"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(info)
        info = archive.gettarinfo(str(apidiff), arcname="sb/apidiff")
        info.mode, info.uid, info.gid, info.uname, info.gname = 0o755, 0, 0, "", ""
        with open(apidiff, "rb") as handle:
            archive.addfile(info, handle)
    return buffer.getvalue()


def compare(apidiff: Path, old: Path, new: Path) -> str:
    proc = subprocess.run([str(apidiff), str(old), str(new)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise UserError(f"apidiff {old.name} {new.name} failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return proc.stdout


def list_packages(module_dir: Path, pattern: str, go: str = "") -> list[str]:
    proc = gotool.run(["list", "-e", "-f", "{{.ImportPath}}", pattern], cwd=module_dir, timeout=600, go=go)
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()]
