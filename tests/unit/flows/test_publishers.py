"""The one publisher factory (flows/publishers.py): each decided destination gets its publisher, a list of them
one MultiPublisher in order, and each publisher meets the protocol (publish/publisher.py). The archive publisher
runs for real on a small layout (tests/unit/publish/test_multi.py loads into the real engine too); the registry
one is exercised by the image tests (integration: a real registry)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from scheduler_build.flows import publishers
from scheduler_build.inputs.publish import (ArchiveInputs, ChartPushInputs, CosignInputs, DaemonInputs, PushInputs,
                                            RegistryInputs, SigningInputs)
from scheduler_build.publish import distribution
from scheduler_build.publish.archive import ArchivePublisher
from scheduler_build.publish.chart import ChartPublisher
from scheduler_build.publish.daemon import DaemonPublisher
from scheduler_build.publish.publisher import ImageArtifact
from scheduler_build.publish.registry import RegistryPublisher

from tests.unit.image.test_info import tiny_layout

ACCESS = RegistryInputs(target=distribution.parse_target("127.0.0.1:5000/acme/scheduler"), creds=None, ca_cert="",
                        insecure=False, retries=2, backoff=0.5)


def test_each_destination_gets_its_publisher():
    signing = SigningInputs("env://KEY", CosignInputs(Path("/nonexistent-cache"), "", {}))
    registry = publishers.publisher(PushInputs(ACCESS, None))
    assert isinstance(registry, RegistryPublisher) and registry.sign is None
    assert (registry.client.target, registry.client.retries, registry.client.backoff) == (ACCESS.target, 2, 0.5)
    assert publishers.publisher(PushInputs(ACCESS, signing)).sign is not None  # cosign is not built until it signs
    chart = publishers.publisher(ChartPushInputs(ACCESS, None, 7))
    assert isinstance(chart, ChartPublisher) and chart.epoch == 7
    assert isinstance(publishers.publisher(ArchiveInputs(Path("x.tar"), Path("cache"), False)), ArchivePublisher)
    daemon = publishers.publisher(DaemonInputs())
    assert isinstance(daemon, DaemonPublisher) and daemon.engine is None  # no engine until it publishes
    assert daemon.early.engine is None and not daemon.early.loaded
    with pytest.raises(TypeError, match="no publisher for str"):  # negative control: an unknown destination
        publishers.publisher("registry.example/x")


def test_a_list_of_destinations_is_one_multi_publisher_in_order():
    archive = ArchiveInputs(Path("x.tar"), Path("cache"), False)
    multi = publishers.publishers([archive, DaemonInputs(), PushInputs(ACCESS, None)])
    assert [name for name, _ in multi.destinations] == ["archive=x.tar", "daemon", "registry"]
    assert [type(p) for _, p in multi.destinations] == [ArchivePublisher, DaemonPublisher, RegistryPublisher]


def test_the_archive_publisher_writes_the_layout_and_names_it(tmp_path):
    lay, info = tiny_layout(tmp_path / "layout")
    target = tmp_path / "out" / "image.tar"
    published = publishers.publisher(ArchiveInputs(target, tmp_path / "cache", False)).publish(ImageArtifact(lay.root, info))
    assert published.references == [str(target)] and published.as_dict() == {"references": [str(target)]}
    with tarfile.open(target) as tar:
        assert "index.json" in tar.getnames() and "image-info.json" in tar.getnames()
        assert {m.mtime for m in tar.getmembers()} == {info.source_date_epoch}  # the image's own date
    assert list((tmp_path / "cache").rglob("*"))  # its digest recorded: the next write finds the file ours
