"""One suffix for records, one for decide functions: inputs/ holds `XInputs` records decided by `x_inputs(c, ...)`
(a stage's own record keeps its stage's name, `XRequest`)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def name_faults(directory: Path) -> list[str]:
    faults = []
    for path in sorted(directory.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any(
                    "dataclass" in ast.unparse(d) for d in node.decorator_list) and not node.name.endswith("Inputs"):
                faults.append(f"{path.name}: record {node.name} does not end in Inputs")
            if isinstance(node, ast.FunctionDef) and node.returns is not None and not node.name.startswith("_"):
                returned = ast.unparse(node.returns)
                if returned.endswith("Inputs") and not node.name.endswith("_inputs"):
                    faults.append(f"{path.name}: {node.name}() decides {returned} but does not end in _inputs")
    return faults


def test_inputs_records_and_decide_functions_have_one_suffix_each(tmp_path):
    assert len(list((REPO / "scheduler_build/inputs").glob("*.py"))) > 10
    assert name_faults(REPO / "scheduler_build/inputs") == []
    (tmp_path / "x.py").write_text("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Target:\n    a: int\n"
                                   "def target(c) -> XInputs:\n    pass\n")
    assert name_faults(tmp_path) == ["x.py: record Target does not end in Inputs",
                                     "x.py: target() decides XInputs but does not end in _inputs"]
