from __future__ import annotations

import pytest

from scheduler_build.compare import quantity


@pytest.mark.parametrize("text, value", [("100m", 0.1), ("2", 2.0), ("1.5", 1.5), ("1Gi", 2.0 ** 30), ("128Mi", 128 * 2.0 ** 20),
                                         ("1k", 1000.0), ("1e3", 1000.0), (".5", 0.5), (4, 4.0), ("0", 0.0)])
def test_quantities(text, value):
    assert quantity.parse(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "lots", "1 Gi", "1GB", True, None, [], "1" * 100, "--1"])
def test_what_is_not_a_quantity(text):
    assert quantity.parse(text) is None
