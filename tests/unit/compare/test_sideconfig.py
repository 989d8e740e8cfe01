"""A side's configuration (compare/sideconfig.py): one profile, every node scored, the reference extender
on the placeholder, anything else compare cannot start refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_build.inputs.common import spec_at
from scheduler_build.compare import sideconfig
from scheduler_build.compare.side import EXTENDER_MARK
from scheduler_build.config import schedulerconfig
from scheduler_build.dev import loop as devloop
from scheduler_build.errors import UserError
from scheduler_build.spec.model import reference_extender_url

EXAMPLE = Path(__file__).resolve().parents[3] / "examples/underlay/scheduler.yaml"


def _example() -> tuple[dict, str]:
    spec = devloop.host_spec(spec_at(EXAMPLE))
    return schedulerconfig.for_spec(spec), reference_extender_url(spec)


def test_the_first_profile_every_node_no_election_and_the_extender_on_the_placeholder():
    config, url = _example()
    out, name = sideconfig.side_config(config, label="a", profile="", reference_url=url)
    assert name == "underlay-scheduler" and [p["schedulerName"] for p in out["profiles"]] == ["underlay-scheduler"]
    assert out["percentageOfNodesToScore"] == 100 and out["leaderElection"] == {"leaderElect": False}
    assert [e["urlPrefix"] for e in out["extenders"]] == [EXTENDER_MARK] and sideconfig.uses_extender(out)
    assert out["extenders"][0]["enableHTTPS"] is False and "tlsConfig" not in out["extenders"][0]
    assert out["profiles"][0]["pluginConfig"][0]["args"]["defaultCapacity"] == 10


def test_a_named_profile_scores_every_node_too():
    config, url = _example()
    out, name = sideconfig.side_config(config, label="b", profile="underlay-scheduler-spread", reference_url=url)
    assert name == "underlay-scheduler-spread" and out["profiles"][0]["percentageOfNodesToScore"] == 100


def test_an_unknown_profile_and_a_foreign_extender_are_one_line():
    config, url = _example()
    with pytest.raises(UserError, match="side a: no profile named 'nope'.*underlay-scheduler, underlay-scheduler-spread"):
        sideconfig.side_config(config, label="a", profile="nope", reference_url=url)
    foreign = dict(config, extenders=[{"urlPrefix": "http://10.0.0.9:80"}])
    with pytest.raises(UserError, match="side b: its configuration calls the extender at http://10.0.0.9:80"):
        sideconfig.side_config(foreign, label="b", profile="", reference_url=url)


def test_a_binary_side_needs_a_scheduler_configuration():
    with pytest.raises(UserError, match="--a-config c.yaml: not a KubeSchedulerConfiguration"):
        sideconfig.from_file({"kind": "Deployment"}, "c.yaml", "a")
