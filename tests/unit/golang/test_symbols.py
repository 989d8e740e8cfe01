"""Method sets from a Go binary's function table and from Go sources (golang/symbols.py), the parts of
the batching verdict's key (config/batching_key.py) that must see a method added, removed or re-signed
and must not see a body or a constant changed.

The judge of the function-table scan is Go's own `go tool nm` on the host's `go` binary (it keeps its
symbol table): the names read from .gopclntab are the ones the linker's symbol table lists."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scheduler_build.build import elf
from scheduler_build.golang import symbols

GO = Path(shutil.which("go") or "/usr/local/go/bin/go").resolve()

PLUGIN = '''package underlay

import (
	"context"
	"fmt" // not a method: func (x *Fake) Gone() {
)

// func (pl *Plugin) Commented(ctx context.Context) {}
type Plugin struct{ cache map[string]int }

func (pl *Plugin) Name() string { return "Plugin{" }

func (pl *Plugin) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	const brace = '{'
	return nil, nil
}

func (pl *Plugin) Filter(
	ctx context.Context,
	state fwk.CycleState,
) *fwk.Status {
	return fmt.Errorf(`{`)
}

func (Plugin) Describe() interface{ String() string } { return nil }

func (l *List[T]) Push(v T) struct{ ok bool } { return struct{ ok bool }{} }

func (pl *Plugin) helper() int { return 1 }

func New(ctx context.Context) (*Plugin, error) { return &Plugin{}, nil }

func (pl *Plugin) Stub(x int) int
'''


def test_method_headers_are_exported_methods_without_bodies_or_receiver_names():
    assert symbols.method_headers(PLUGIN) == [
        "func (*Plugin) Name() string",
        "func (*Plugin) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status)",
        "func (*Plugin) Filter( ctx context.Context, state fwk.CycleState, ) *fwk.Status",
        "func (Plugin) Describe() interface{ String() string }",
        "func (*List[T]) Push(v T) struct{ ok bool }",
        "func (*Plugin) Stub(x int) int",
    ]


def test_a_body_or_a_constant_edit_keeps_the_headers_and_a_signature_edit_or_removal_changes_them():
    before = symbols.method_headers(PLUGIN)
    assert symbols.method_headers(PLUGIN.replace("return nil, nil", "return []fwk.SignFragment{}, nil")
                                  .replace('"Plugin{"', '"other"')) == before
    renamed = PLUGIN.replace("func (pl *Plugin) SignPod", "func (p *Plugin) SignPod")
    assert symbols.method_headers(renamed) == before  # the receiver's name is not part of the method
    # negative controls: what decides whether the plugin implements SignPlugin
    assert symbols.method_headers(PLUGIN.replace("pod *v1.Pod) ([]fwk", "pod *v1.Pod, n int) ([]fwk")) != before
    assert symbols.method_headers(PLUGIN.replace("SignPod(", "signPod(")) != before
    assert symbols.method_headers(PLUGIN.replace("(pl *Plugin) SignPod", "(pl Plugin) SignPod")) != before


def test_module_headers_skip_tests_and_testdata_and_ignore_which_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/a.go").write_text(PLUGIN)
    (tmp_path / "pkg/a_test.go").write_text("package underlay\nfunc (pl *Plugin) TestOnly() {}\n")
    (tmp_path / "testdata").mkdir()
    (tmp_path / "testdata/x.go").write_text("package x\nfunc (x *X) Data() {}\n")
    headers = symbols.module_method_headers(tmp_path)
    assert headers == sorted(symbols.method_headers(PLUGIN))
    (tmp_path / "pkg/a.go").unlink()
    (tmp_path / "pkg/b.go").write_text(PLUGIN)
    assert symbols.module_method_headers(tmp_path) == headers


@pytest.mark.parametrize("name, split", [
    ("example.com/acme/underlay/pkg/u.(*UnderlayIPLimit).SignPod", ("example.com/acme/underlay/pkg/u", "(*UnderlayIPLimit).SignPod")),
    ("example.com/m.T.Name", ("example.com/m", "T.Name")),
    ("gopkg.in/yaml%2ev3.(*Node).Decode", ("gopkg.in/yaml%2ev3", "(*Node).Decode")),
    ("example.com/m.(*T[example.com/x.Y]).M", ("example.com/m", "(*T[example.com/x.Y]).M")),
    ("example.com/m/pkg/args.go", ("example.com/m/pkg/args", "go")),  # a file name of the table: no method
])
def test_a_symbol_splits_into_package_and_member(name, split):
    assert symbols.split_symbol(name) == split


def test_methods_in_keeps_exported_methods_of_the_modules_packages_only():
    names = {"example.com/acme/underlay/pkg/u.(*P).SignPod", "example.com/acme/underlay/pkg/u.(*P).Filter.func1",
             "example.com/acme/underlay/pkg/u.(*P).deferwrap1", "example.com/acme/underlay/pkg/u.(*P).used",
             "example.com/acme/underlay/pkg/u.New", "example.com/acme/underlay.Args.Validate",
             "example.com/acme/underlayer/pkg/v.(*Q).Score", "k8s.io/kubernetes/pkg/x.(*P).SignPod",
             "example.com/acme/underlay/pkg/u/file.go"}
    assert symbols.methods_in(names, ["example.com/acme/underlay"]) == [
        "example.com/acme/underlay.Args.Validate", "example.com/acme/underlay/pkg/u.(*P).SignPod"]
    assert symbols.symbol_prefixes("gopkg.in/yaml.v3") == ("gopkg.in/yaml%2ev3.", "gopkg.in/yaml.v3/")


def test_the_function_table_lists_what_the_symbol_table_does():
    """Go's `go tool nm` (the symbol table, which a `-s -w` build lacks) is the judge of the scan of
    .gopclntab (which every Go binary has)."""
    package = "cmd/go/internal/modload"
    listed = subprocess.run([str(GO), "tool", "nm", str(GO)], capture_output=True, text=True, check=True).stdout
    judged = symbols.methods_in({line.split()[-1] for line in listed.splitlines() if " T " in line}, [package])
    found = symbols.exported_methods(GO, [package])
    assert judged and found == judged
    assert symbols.exported_methods(GO, ["example.invalid/none"]) == []  # negative control


def test_a_binary_without_a_function_table_is_refused(tmp_path):
    true = Path(shutil.which("true")).resolve()  # a C binary: sections, none of them Go's
    assert elf.section(true.read_bytes(), ".text") is not None
    with pytest.raises(ValueError, match="no .gopclntab"):
        symbols.exported_methods(true, ["example.com/m"])
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF\x02\x01" + b"\xff" * 100)
    assert elf.section(garbage.read_bytes(), ".gopclntab") is None
    with pytest.raises(ValueError):
        symbols.exported_methods(garbage, ["example.com/m"])
