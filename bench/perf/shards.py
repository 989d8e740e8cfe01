"""Cells as the unit of work: which share of a bench.perf run a shard makes. Pure.

A cell is one (repeat, workload, variant) run. The unit handed to a shard is a *group*: one repeat of
one workload with all its variants, so the variants a ratio compares still run interleaved (vanilla,
spec, extender) on one machine under the same load; a group is never split. Groups are numbered in
the order a local run makes them (repeat, then workload) and dealt round-robin: group k goes to shard
k mod N + 1. The numbering is the same everywhere a shard is named: `bench.perf --shard I/N`, the CI
matrix and a Kubernetes Indexed Job (shard I is completion index I - 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_build.errors import UserError

_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def as_dict(self) -> dict:
        return {"index": self.index, "count": self.count}


def parse(text: str, flag: str = "--shard") -> Shard:
    """`I/N` (1 <= I <= N) -> Shard; a UserError naming the flag otherwise."""
    found = _FORM.match(str(text))
    if not found:
        raise UserError(f"{flag} {text!r}: not I/N", f"e.g. {flag} 1/2 (the first of two shares of the cells)")
    index, count = int(found.group(1)), int(found.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UserError(f"{flag} {text}: the index must be between 1 and the count", f"e.g. {flag} 1/{max(count, 2)}")
    return Shard(index, count)


def from_dict(data: object, source: str) -> Shard:
    """The shard a raw file names (its "shard": {"index", "count"}); a UserError when it names none."""
    if not isinstance(data, dict) or not isinstance(data.get("index"), int) or not isinstance(data.get("count"), int):
        raise UserError(f"{source}: names no shard", "pass the raw files `bench.perf --shard I/N` wrote")
    return parse(f"{data['index']}/{data['count']}", source)


def groups(repeats: int, labels: list[str]) -> list[tuple[int, str]]:
    """Every (repeat, workload label) group in the order a local run makes them (repeats from 1)."""
    return [(rep, label) for rep in range(1, repeats + 1) for label in labels]


def share(shard: Shard | None, repeats: int, labels: list[str]) -> list[tuple[int, str]]:
    """The groups `shard` runs, in local order (all of them without a shard); a UserError when it gets none."""
    every = groups(repeats, labels)
    if shard is None:
        return every
    if shard.count > len(every):
        raise UserError(f"--shard {shard}: only {len(every)} group(s) of cells (repeats x workloads) to share",
                        f"use at most {len(every)} shards, or more --repeats or --workloads")
    return [g for k, g in enumerate(every) if k % shard.count == shard.index - 1]
