"""What every `inv test` tier's pytest run records: its JUnit XML and its slowest tests."""

from __future__ import annotations

from pathlib import Path


def records_args(out: Path, name: str) -> list[str]:
    """The tier's JUnit XML and its slowest tests (pytest's --durations, kept in a file beside it)."""
    return [f"--junitxml={out / (name + '.xml')}", "--durations=30", "--durations-min=1.0",
            f"--durations-file={out / (name + '-durations.txt')}"]  # tests/conftest.py
