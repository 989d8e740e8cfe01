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


def test_partial_requests_after_a_cache_change_agree_with_the_cluster_wide_verdicts():
    """A request naming under half the cached nodes, with stale verdicts, is judged on its own
    nodes (VerdictMemo.get returns None); the answer must be the one the verdicts give."""
    import msgspec

    from scheduler_build.extender.service import ServeConfig, create
    from testkit import samples

    ext, _ = create(ServeConfig(), connect=False)
    nodes, pods = samples.cluster(40, pods_per_node=7, capacity=6)
    ext.cache.replace("nodes", msgspec.json.decode(msgspec.json.encode(nodes)), "1")
    ext.cache.replace("pods", msgspec.json.decode(msgspec.json.encode(pods)), "1")
    for kind in ("nodes", "pods"):
        ext.cache.mark_synced(kind)
    names = [n["metadata"]["name"] for n in nodes]
    pod = samples.pod("p")

    def ask(verb: str, subset: list[str]) -> dict | list:
        body = msgspec.json.encode(samples.filter_args(pod, [], True) | {"NodeNames": subset})
        return msgspec.json.decode(getattr(ext, verb)(body).body)

    for verb in ("filter", "prioritize"):
        full = ask(verb, names + ["ghost"])  # every node: the cluster-wide verdicts, memoised
        ext.cache.generation += 1  # as a watch event does
        part = ask(verb, names[:7] + ["ghost"])  # under half, stale: judged directly
        if verb == "filter":
            assert part["NodeNames"] == [n for n in full["NodeNames"] if n in names[:7]]
            assert part["FailedNodes"] == {k: v for k, v in full["FailedNodes"].items() if k in names[:7]}
            assert part["FailedAndUnresolvableNodes"] == {k: v for k, v in full["FailedAndUnresolvableNodes"].items()
                                                          if k in names[:7] or k == "ghost"}
            assert full["FailedNodes"] or full["FailedAndUnresolvableNodes"]  # the sample rejects some
        else:
            assert part == [h for h in full if h["Host"] in names[:7] or h["Host"] == "ghost"]


def _plain(obj):
    import msgspec

    return msgspec.json.decode(msgspec.json.encode(obj))


def _change_the_cache(cache, rng: random.Random, step: int, names: list[str], live: list, now: list[float]) -> None:
    """One random change of the kinds the reflectors and the bind verb make."""
    from testkit import samples

    change = rng.randrange(7)
    if change == 0:  # a bind confirmed by the watch
        new = samples.pod(f"new-{step}", node_name=rng.choice(names), phase="Running")
        live.append(new)
        cache.apply("pods", "MODIFIED", _plain(new))
    elif change == 1 and live:  # a pod deleted
        cache.apply("pods", "DELETED", _plain(live.pop(rng.randrange(len(live)))))
    elif change == 2:  # the extender's own bind, not yet confirmed
        cache.assume(f"assumed-{step}", rng.choice(names), 1)
    elif change == 3:  # a node relabelled (capacity), or removed
        name = rng.choice(names)
        event = "DELETED" if rng.random() < 0.3 else "MODIFIED"
        cache.apply("nodes", event, _plain(samples.node(name, capacity=rng.choice([0, 2, 9, "bad"]))))
    elif change == 4:
        cache.forget(next(iter(cache.assumed), ""))
    elif change == 5:  # time passes: assumed pods past their TTL expire on the next request
        now[0] += cache.assume_ttl * rng.choice([0.5, 1.5])
    else:  # a relist (a watch expired): pods, sometimes nodes too, replaced wholesale
        if rng.random() < 0.5:
            kept = [samples.node(n, capacity=rng.choice([1, 4, 9])) for n in names if rng.random() < 0.9]
            cache.replace("nodes", _plain(kept), f"r{step}")
        cache.replace("pods", _plain(live), f"r{step}")


@pytest.mark.parametrize("seed", range(6))
def test_verdicts_patched_after_cache_changes_agree_with_judging_afresh(seed):
    """After binds, deletions, assumed pods (forgotten or expired), node changes and relists,
    the memoised verdicts (only the touched nodes judged again, ClusterCache.changed_since)
    answer exactly as a direct judgement of the requested nodes does, for small and
    whole-cluster requests alike."""
    import msgspec

    from scheduler_build.extender.service import ServeConfig, create
    from scheduler_build.extender.cache import ClusterCache
    from testkit import samples

    rng = random.Random(seed)
    ext, _ = create(ServeConfig(), connect=False)
    nodes, pods = samples.cluster(60, pods_per_node=5, capacity=4)
    ext.cache.replace("nodes", _plain(nodes), "1")
    ext.cache.replace("pods", _plain(pods), "1")
    for kind in ("nodes", "pods"):
        ext.cache.mark_synced(kind)
    names = [n["metadata"]["name"] for n in nodes]
    pod = samples.pod("p")
    live = list(pods)
    now = [0.0]
    ext.cache._clock = lambda: now[0]  # assumed pods expire when the test says

    def ask(verb: str, subset: list[str]):
        body = msgspec.json.encode(samples.filter_args(pod, [], True) | {"NodeNames": subset})
        return msgspec.json.decode(getattr(ext, verb)(body).body)

    def direct(verb: str, subset: list[str]):
        """The same request on a memo-less path: the policy over the requested nodes."""
        saved, ext.policy.decision_key = ext.policy.decision_key, lambda _pod: None
        try:
            return ask(verb, subset)
        finally:
            del ext.policy.decision_key
            assert ext.policy.decision_key == saved

    patched, patch = [], ext.verdicts._patch
    ext.verdicts._patch = lambda *args: (patched.append(args[0]), patch(*args))[1]
    for verb in ("filter", "prioritize"):
        ask(verb, names)  # builds the cluster-wide verdicts
    for step in range(40):
        _change_the_cache(ext.cache, rng, step, names, live, now)
        subset = rng.sample(names, rng.randrange(1, 12)) + ["ghost"]
        for verb in ("filter", "prioritize"):
            for request in (subset, names):
                got, want = ask(verb, request), direct(verb, request)
                if verb == "prioritize":  # the direct path lists unknown nodes last; order is not meaningful
                    got, want = sorted(got, key=lambda h: h["Host"]), sorted(want, key=lambda h: h["Host"])
                assert got == want, (step, verb)
    assert ext.verdicts._memo and patched  # the memo was used and patched, not bypassed
    assert isinstance(ext.cache, ClusterCache) and ext.cache.changed_since(-1) is None


def test_changed_since_names_the_touched_nodes_and_forgets_past_a_full_list():
    from scheduler_build.extender.cache import ClusterCache
    from testkit import samples

    cache = ClusterCache(pod_usage=lambda pod: 1)
    cache.replace("nodes", [samples.node("a"), samples.node("b")], "1")
    start = cache.generation
    assert cache.changed_since(start) == set()
    cache.apply("pods", "ADDED", samples.pod("x", node_name="b", phase="Running"))
    cache.assume("u1", "a", 1)
    assert cache.changed_since(start) == {"a", "b"}
    assert cache.changed_since(cache.generation) == set()
    cache.replace("pods", [], "2")
    assert cache.changed_since(start) is None  # before the full list: unknown


def test_changed_since_stays_exact_while_the_journal_is_trimmed(monkeypatch):
    """Past 2 x JOURNAL entries the oldest half goes: every generation from the new floor on
    still gets exactly the nodes changed after it, older ones get None (judge everything)."""
    from scheduler_build.extender import cache as cache_mod
    from testkit import samples

    monkeypatch.setattr(cache_mod, "JOURNAL", 8)
    rng = random.Random(7)
    cache = cache_mod.ClusterCache(pod_usage=lambda pod: 1)
    cache.replace("nodes", [samples.node(f"n{i}") for i in range(6)], "1")
    history = []  # (generation after the change, nodes it touched)
    for step in range(60):
        before = cache.generation
        if rng.random() < 0.5:
            cache.assume(f"u{step}", f"n{rng.randrange(6)}", 1)
            touched = {cache.assumed[f"u{step}"][0]}
        else:  # a pod moving between nodes: two nodes at one generation
            a, b = f"n{rng.randrange(6)}", f"n{rng.randrange(6)}"
            cache.apply("pods", "ADDED", samples.pod(f"m{step}", node_name=a, phase="Running"))
            history.append((cache.generation, {a}))
            cache.apply("pods", "MODIFIED", samples.pod(f"m{step}", node_name=b, phase="Running"))
            touched = {a, b}
        history.append((cache.generation, touched))
        assert cache.generation > before
        for gen in range(cache.generation + 1):
            got = cache.changed_since(gen)
            if gen < cache._journal_floor:
                assert got is None
            else:
                assert got == set().union(*(t for g, t in history if g > gen)), (step, gen)
    assert cache._journal_floor > 0  # it was trimmed
