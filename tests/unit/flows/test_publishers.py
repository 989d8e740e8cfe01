"""The one publisher factory (flows/publishers.py): each decided destination gets its publisher, and each
publisher meets the protocol (publish/publisher.py). The archive publisher runs for real on a small layout;
the registry and daemon ones are exercised by the image tests (integration: a real registry and engine)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from scheduler_build.flows import publishers
from scheduler_build.inputs.publish import (ArchiveInputs, ChartPushInputs, CosignInputs, DaemonInputs, PushInputs,
                                            RegistryInputs, SigningInputs)
from scheduler_build.publish import registry as registry_stage
from scheduler_build.publish.publishers.archive import ArchivePublisher
from scheduler_build.publish.publishers.chart import ChartPublisher
from scheduler_build.publish.publishers.daemon import DaemonPublisher
from scheduler_build.publish.publishers.registry import RegistryPublisher

ACCESS = RegistryInputs(target=registry_stage.parse_target("127.0.0.1:5000/acme/scheduler"), creds=None, ca_cert="",
                        insecure=False, retries=2, backoff=0.5)


def test_each_destination_gets_its_publisher():
    signing = SigningInputs("env://KEY", CosignInputs(Path("/nonexistent-cache"), "", {}))
    registry = publishers.publisher(PushInputs(ACCESS, None))
    assert isinstance(registry, RegistryPublisher) and registry.sign is None
    assert (registry.client.target, registry.client.retries, registry.client.backoff) == (ACCESS.target, 2, 0.5)
    assert publishers.publisher(PushInputs(ACCESS, signing)).sign is not None  # cosign is not built until it signs
    chart = publishers.publisher(ChartPushInputs(ACCESS, None, 7))
    assert isinstance(chart, ChartPublisher) and chart.epoch == 7
    assert isinstance(publishers.publisher(ArchiveInputs(Path("x.tar"), 1)), ArchivePublisher)
    daemon = publishers.publisher(DaemonInputs(frozenset({"linux/amd64"})))
    assert isinstance(daemon, DaemonPublisher) and daemon.engine is None  # no engine until it publishes
    with pytest.raises(TypeError, match="no publisher for str"):  # negative control: an unknown destination
        publishers.publisher("registry.example/x")


def test_the_archive_publisher_writes_the_layout_and_names_it(tmp_path):
    layout = tmp_path / "layout"
    (layout / "blobs" / "sha256").mkdir(parents=True)
    (layout / "index.json").write_text("{}")
    (layout / "blobs" / "sha256" / "ab").write_bytes(b"blob")
    target = tmp_path / "out" / "image.tar"
    published = publishers.publisher(ArchiveInputs(target, 1700000000)).publish(layout)
    assert published.references == [str(target)] and published.as_dict() == {"references": [str(target)]}
    with tarfile.open(target) as tar:
        assert sorted(tar.getnames()) == ["blobs/sha256/ab", "index.json"]
        assert {m.mtime for m in tar.getmembers()} == {1700000000}
