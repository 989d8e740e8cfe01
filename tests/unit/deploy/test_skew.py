"""Kubernetes' version skew policy as `deploy` enforces it (scheduler_build/deploy/skew.py): pure functions,
checked exhaustively over every pair of minors around a server, each case against the policy's own words."""

from __future__ import annotations

import itertools

import pytest

from scheduler_build.deploy import apply, skew

MINORS = range(20, 45)


def upstream_policy(scheduler: int, server: int) -> bool:
    """The policy as upstream states it: never newer than kube-apiserver, at most one minor older."""
    return scheduler <= server and server - scheduler <= 1


@pytest.mark.parametrize("server", MINORS)
def test_every_pair_of_minors_is_judged_as_the_policy_says(server):
    accepted = []
    for scheduler, patch in itertools.product(range(server - 6, server + 7), (0, 7)):
        found = skew.verdict(f"v1.{scheduler}.{patch}", f"v1.{server}.3")
        assert found.ok is upstream_policy(scheduler, server), (scheduler, server, found)
        assert (found.reason == "") is found.ok
        if found.ok:
            accepted.append(scheduler)
    # exactly two minors per server: its own and the one before (negative control of a looser policy)
    assert sorted(set(accepted)) == [server - 1, server]
    assert skew.allowed_minors(f"v1.{server}.3") == (f"1.{server}", f"1.{server - 1}")


def test_a_newer_scheduler_is_refused_in_one_line_naming_both_versions_and_the_policy():
    found = skew.verdict("v1.37.2", "v1.36.3")
    assert not found.ok
    assert "v1.37.2" in found.reason and "v1.36.3" in found.reason and skew.POLICY in found.reason
    assert "1 minor newer" in found.reason and "\n" not in found.reason
    hint = skew.hint(found)
    assert "1.36 or 1.35" in hint and "1.37 or 1.38" in hint and "--allow-version-skew" in hint


def test_two_minors_older_is_refused_and_one_older_is_not():
    assert "2 minors older" in skew.verdict("v1.34.4", "v1.36.3").reason
    assert skew.verdict("v1.35.4", "v1.36.3").ok and skew.verdict("v1.36.1", "v1.36.3").ok
    assert skew.verdict("v1.36.9", "v1.36.3").ok  # a newer patch of the same minor is within the policy


@pytest.mark.parametrize("server, minor", [("v1.36.3+k3s1", (1, 36)), ("v1.36.3-eks-4f1a2", (1, 36)),
                                           ("1.37", (1, 37)), ("v1.38.0-rc.1", (1, 38)), (" v1.36.3 ", (1, 36))])
def test_distribution_versions_are_read_by_their_minor(server, minor):
    assert skew.minor(server) == minor


@pytest.mark.parametrize("text", ["", "latest", "1", "vx.y", "1.36.3.4"])
def test_what_is_not_a_version_is_refused(text):
    with pytest.raises(ValueError):
        skew.minor(text)


def test_a_different_major_is_refused():
    assert not skew.verdict("v2.0.0", "v1.36.3").ok and "major" in skew.verdict("v2.0.0", "v1.36.3").reason


@pytest.mark.parametrize("tag, version", [("v1.36.3-0.1.0", "v1.36.3"), ("v1.37.0-rc.1-1.0.0", "v1.37.0"),
                                          ("v1.36.3", "v1.36.3"), ("stable-1", ""), ("1.36.3-0.1.0", ""),
                                          ("v1.36-0.1.0", ""), ("", "")])
def test_the_version_of_a_default_image_tag(tag, version):
    assert skew.tag_version(tag) == version


def test_a_rendered_directory_names_its_schedulers_version_through_the_image_tag(tmp_path):
    """deploy --dir: the version comes from the rendered Deployment's image (the default tag), or is unknown."""
    from scheduler_build import spec as spec_mod
    from scheduler_build.config import render

    path = tmp_path / "scheduler.yaml"
    path.write_text("name: s\nversion: 0.1.0\nkubernetes: {version: v1.37.2}\nnamespace: default\n")
    loaded = spec_mod.load(path)
    for ref, version in [(render.image_ref(loaded, "v1.37.2"), "v1.37.2"),
                         ("registry.example.com:5000/a/s:v1.35.4-2.0.0@sha256:" + "a" * 64, "v1.35.4"),
                         ("registry.example.com/a/s:latest", "")]:
        objects = apply.load_files(render.render_files(loaded, ref))
        assert apply.scheduler_version_of(objects) == version, ref


def test_the_pair_doctor_and_cluster_status_show(tmp_path):
    """apply.skew_pair: the spec's release beside a server version; without a spec or a server version, the
    scheduler side is None with the reason (the allowed minors still said when the server's is known)."""
    missing = apply.skew_pair(tmp_path / "none.yaml", "v1.36.3", tmp_path)
    assert missing["scheduler"] is None and missing["ok"] is None and "no spec at" in missing["reason"]
    assert missing["allowed_scheduler_minors"] == ["1.36", "1.35"]
    assert "unknown" in apply.skew_pair(tmp_path / "none.yaml", "", tmp_path)["reason"]
    spec = tmp_path / "scheduler.yaml"
    spec.write_text("name: s\nversion: 0.1.0\nkubernetes: {version: v1.37.2}\nnamespace: default\n")
    from scheduler_build import settings

    refused = apply.skew_pair(spec, "v1.36.3", settings.cache_dir())
    assert (refused["scheduler"], refused["apiserver"], refused["ok"]) == ("v1.37.2", "v1.36.3", False)
    assert apply.skew_pair(spec, "v1.37.2+k3s1", settings.cache_dir())["ok"] is True
