"""NodeNames answers from cluster-wide verdicts (extender/verdicts.py) against the name-by-name reference."""

from __future__ import annotations

import random

import pytest

from scheduler_build.extender import protocol
from scheduler_build.extender.policy import Unresolvable
from scheduler_build.extender.verdicts import FilterVerdicts, filter_answer, scores_answer

KNOWN = {f"node-{i}": None for i in range(50)}
VERDICTS = {"node-3": "full", "node-7": Unresolvable("no capacity label"), "node-9": "full", "node-40": Unresolvable("bad")}


def reference(names: list[str]) -> tuple[list[str], dict, dict]:
    """What the extender answered before, one name at a time."""
    failed_all = {n: VERDICTS[n] for n in names if n in VERDICTS}
    unknown = [n for n in names if n not in KNOWN]
    failed, unresolvable = {}, {}
    for name, reason in failed_all.items():
        (unresolvable if isinstance(reason, Unresolvable) else failed)[name] = str(reason)
    for name in unknown:
        unresolvable[name] = f"node {name} is not in the extender's node cache"
    return [n for n in names if n not in failed_all and n not in unresolvable], failed, unresolvable


@pytest.mark.parametrize("seed", range(30))
def test_filter_answer_is_the_reference(seed):
    rng = random.Random(seed)
    pool = list(KNOWN) + ["ghost-1", "ghost-2"]
    names = rng.sample(pool, rng.randrange(0, len(pool))) + rng.choices(pool, k=rng.randrange(0, 3))  # duplicates too
    if seed == 0:
        names = list(KNOWN)  # every node: the shared dicts are returned as they are
    answer = filter_answer(FilterVerdicts.of(VERDICTS), names, KNOWN)
    passed, failed, unresolvable = reference(names)
    assert answer.passed == passed
    assert answer.failed == failed and answer.unresolvable == unresolvable
    assert all(type(v) is str for v in answer.unresolvable.values())


def test_scores_answer_encodes_as_before():
    scores = {"a": 10, "b": 0, "c": 7}
    names = ["c", "zz", "a", "b", "a"]
    expected = protocol.dumps([protocol.HostPriority(n, scores.get(n, 0)) for n in names])
    assert protocol.dumps(scores_answer(scores, names)) == expected
    assert b'{"Host":"zz","Score":0}' in expected
