"""The key `build`'s batching verdict is kept under (config/batching_key.py): it changes with what the
binary's verdict depends on and stays when a plugin's bodies or constants change. The binary read is
the host's `go` (a real Go binary with a function table); the record is build/info.py's own dataclass.
The real kube-scheduler after a real plugin edit: tests/integration/test_batching_key.py."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from scheduler_build.build import info as build_info
from scheduler_build.config import batching_key

GO = Path(shutil.which("go") or "/usr/local/go/bin/go").resolve()
SIGNED = "package p\n\nfunc (pl *P) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {\n\treturn nil, nil\n}\n"


def record(**overrides) -> build_info.BuildInfo:
    fields = dict(
        scheduler_build="0.0.0", name="s", component="kube-scheduler", platform="linux/amd64",
        kubernetes=build_info.KubernetesInfo("1.36", "v1.36.3", "v1.36.3", "1.26.0", {}),
        builder=build_info.BuilderInfo("golang:1.26", "sha256:aa", "1.26.8", "official"),
        vendor=build_info.VendorInfo("bb" * 32, "cc" * 32, True),
        flags=build_info.FlagsInfo(["go", "build"], "-s -w", {}, "none", False),
        source_date_epoch=0,
        binary=build_info.BinaryInfo("/d/kube-scheduler", "dd" * 32, 10, True, "EXEC", "Kubernetes v1.36.3", "native"),
        host=build_info.HostInfo("x86_64", "3.12.0"),
        plugins=[build_info.PluginInfo("cmd/go/internal/modload", ["ModLoad"], "module", "cmd/go/internal/modload",
                                       version="v0.0.1")],
    )
    fields.update(overrides)
    return build_info.BuildInfo(**fields)


def _local(cache: Path, digest: str, source: str) -> build_info.PluginInfo:
    """A local plugin whose snapshot (what the compile read) holds `source`."""
    snapshot = cache / "plugins" / digest[:32] / "pkg"
    snapshot.mkdir(parents=True)
    (snapshot / "p.go").write_text(source)
    return build_info.PluginInfo("example.com/p/pkg", ["P"], "path", "example.com/p", path="/src/p", sha256=digest)


def test_the_key_stays_for_a_body_edit_and_changes_with_what_the_verdict_depends_on(tmp_path):
    base = record(plugins=record().plugins + [_local(tmp_path, "11" * 32, SIGNED)])
    key = batching_key.depends_on(GO, base, tmp_path)
    assert key != base.binary.sha256 and key == batching_key.depends_on(GO, base, tmp_path)
    body_edit = _local(tmp_path, "22" * 32, SIGNED.replace("return nil, nil", "return nil, fwk.NewStatus(fwk.Error)"))
    edited = dataclasses.replace(base, plugins=base.plugins[:1] + [body_edit],
                                 binary=dataclasses.replace(base.binary, sha256="ee" * 32))
    assert batching_key.depends_on(GO, edited, tmp_path) == key  # a new binary, the same method sets
    # negative controls: each of these can change the verdict
    unsigned = _local(tmp_path, "33" * 32, SIGNED.replace("SignPod", "signPod"))
    resigned = _local(tmp_path, "44" * 32, SIGNED.replace("pod *v1.Pod)", "pod *v1.Pod, n int)"))
    for changed in (dataclasses.replace(base, plugins=base.plugins[:1] + [unsigned]),
                    dataclasses.replace(base, plugins=base.plugins[:1] + [resigned]),
                    dataclasses.replace(base, kubernetes=dataclasses.replace(base.kubernetes, version="v1.36.4")),
                    dataclasses.replace(base, patches=[build_info.PatchInfo("0001.patch", "55" * 32)],
                                        patch_series_digest=""),
                    dataclasses.replace(base, debuggable={"enabled": True}),
                    dataclasses.replace(base, vendor=dataclasses.replace(base.vendor, go_sum_sha256="66" * 32)),
                    dataclasses.replace(base, plugins=[dataclasses.replace(base.plugins[0], version="v0.0.2"),
                                                       base.plugins[1]])):
        assert batching_key.depends_on(GO, changed, tmp_path) != key


def test_the_binarys_methods_are_part_of_the_key():
    parts = batching_key.plugin_parts(record(), ["cmd/go/internal/modload.(*MainModuleSet).Versions"], {})
    assert parts[-1] == "method cmd/go/internal/modload.(*MainModuleSet).Versions"
    assert batching_key.plugin_parts(record(), [], {}) != parts


def test_without_a_function_table_or_a_snapshot_the_key_is_the_binarys_digest(tmp_path):
    """Then the verdict is asked of the binary itself, as before the key existed."""
    true = Path(shutil.which("true")).resolve()
    assert batching_key.depends_on(true, record(), tmp_path) == "dd" * 32
    gone = build_info.PluginInfo("example.com/p/pkg", ["P"], "path", "example.com/p", path="/src/p", sha256="77" * 32)
    assert batching_key.depends_on(GO, record(plugins=[gone]), tmp_path) == "dd" * 32
