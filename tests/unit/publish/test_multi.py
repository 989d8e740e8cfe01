"""One artifact to several destinations in order (publish/multi.py), with real publishers: the archive writes a
real tar, the daemon loads a real (tiny) image into the running Docker engine, and a failing destination fails
for real (an archive whose directory is a file; an engine at a closed port). Nothing is mocked.

The images loaded here are tagged scheduler-build-test/multi:<random> and removed afterwards (only those)."""

from __future__ import annotations

import json
import os
import socket
import tarfile
import uuid
from pathlib import Path

import docker
import pytest

from scheduler_build.engine import Engine, connect
from scheduler_build.errors import UserError
from scheduler_build.image import layer, oci
from scheduler_build.image.info import ImageInfo, PlatformEntry
from scheduler_build.publish.archive import ArchivePublisher, write
from scheduler_build.publish.daemon import DaemonPublisher
from scheduler_build.publish.multi import MultiPublisher
from scheduler_build.publish.publisher import ImageArtifact

from tests.integration.test_input_errors import INV, assert_one_line, run

EPOCH = 1700000000


def loadable_image(root: Path, tag: str) -> ImageArtifact:
    """A one-platform layout the engine can load: a real gzip layer of a random file, a config naming its diff_id,
    and the image-info.json record (its local tag `tag`). Random content: a fresh image ID per test."""
    root.mkdir(parents=True, exist_ok=True)
    lay = oci.Layout(root / "layout")
    binary, ca = root / "kube-scheduler", root / "ca.crt"
    binary.write_bytes(b"\x7fELF" + os.urandom(512))
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    diff_id, layer_digest, layer_size = layer.write_compressed_layer(
        root / "layer.tar.gz", layer.rootfs_entries(binary, "kube-scheduler", ca_bundle=ca), EPOCH)
    assert lay.put((root / "layer.tar.gz").read_bytes()) == layer_digest
    config = oci.canonical({**oci.platform_dict("amd64"), "config": {"Entrypoint": ["/kube-scheduler"]},
                            "rootfs": {"type": "layers", "diff_ids": [diff_id]}})
    config_digest = lay.put(config)
    manifest = oci.canonical({"schemaVersion": 2, "mediaType": oci.MANIFEST,
                              "config": {"mediaType": oci.CONFIG, "digest": config_digest, "size": len(config)},
                              "layers": [{"mediaType": oci.LAYER_GZIP, "digest": layer_digest, "size": layer_size}]})
    manifest_digest = lay.put(manifest)
    index = oci.canonical({"schemaVersion": 2, "mediaType": oci.INDEX, "manifests": [
        {"mediaType": oci.MANIFEST, "digest": manifest_digest, "size": len(manifest), "platform": oci.platform_dict("amd64")}]})
    index_digest = lay.put(index)
    lay.write_index([{"mediaType": oci.INDEX, "digest": index_digest, "size": len(index), "annotations": {oci.REF_NAME: "v1"}}])
    other = lay.put(b"an SBOM, a provenance statement: not loaded")
    entry = PlatformEntry(
        platform="linux/amd64", arch="amd64", image_id=config_digest, manifest_digest=manifest_digest,
        manifest_size=len(manifest), layer_digest=layer_digest, layer_size=layer_size, binary_size=516,
        sbom="/d/k.spdx.json", sbom_sha256="00" * 32, sbom_manifest_digest=other, sbom_manifest_size=1,
        cyclonedx="/d/k.cdx.json", cyclonedx_manifest_digest=other, cyclonedx_manifest_size=1, provenance_digest=other,
        local_tags=[tag])
    ImageInfo(name="sched", repository="scheduler-build-test/multi", kubernetes_version="v1.36.3", tags=["v1"],
              inputs_key="ab" * 32, source_date_epoch=EPOCH, index_digest=index_digest, index_size=len(index),
              platforms=[entry]).write(lay.root)
    return ImageArtifact.of_layout(lay.root)


@pytest.fixture
def engine() -> Engine:
    return connect(timeout=60)


@pytest.fixture
def image(tmp_path, engine):
    tag = f"scheduler-build-test/multi:{uuid.uuid4().hex[:12]}"
    yield loadable_image(tmp_path, tag)
    engine.remove_image(tag)  # ours only: the random tag this test loaded


def dead_engine() -> Engine:
    """A real SDK client aimed at a port nothing listens on (as tests/unit/engine does): every call fails."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return Engine(docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", version="1.41", timeout=5))


def held(engine: Engine, artifact: ImageArtifact) -> bool:
    entry = artifact.info.platforms[0]
    found = engine.inspect_image(entry.local_tag)
    return found is not None and found.id == entry.image_id


@pytest.mark.integration  # the real Docker engine: the integration tier
def test_each_destination_in_order_and_every_result(tmp_path, engine, image):
    out = tmp_path / "out" / "image.tar"
    to = MultiPublisher([(f"archive={out}", ArchivePublisher(out, tmp_path / "cache", False)),
                         ("daemon", DaemonPublisher(engine=engine))])
    published = to.publish(image)
    assert [name for name, _ in published.results] == [f"archive={out}", "daemon"]
    assert published.references == [str(out), image.info.platforms[0].local_tag]  # in --to's order
    assert published.as_dict()["destinations"][1] == {"to": "daemon", "references": [image.info.platforms[0].local_tag],
                                                      "loaded": True}
    with tarfile.open(out) as tar:
        assert "image-info.json" in tar.getnames() and {m.mtime for m in tar.getmembers()} == {EPOCH}  # the image's date
    assert held(engine, image)
    # Again: the engine holds the same ID under the tag, so the daemon loads nothing (and says so).
    assert MultiPublisher([("daemon", DaemonPublisher(engine=engine))]).publish(image).as_dict()["loaded"] is False


@pytest.mark.integration  # the real Docker engine: the integration tier
def test_the_first_failure_stops_the_rest_and_names_its_destination(tmp_path, engine, image):
    (tmp_path / "file").write_text("not a directory")
    bad = tmp_path / "file" / "image.tar"  # its directory is a file: the write fails for real
    to = MultiPublisher([(f"archive={bad}", ArchivePublisher(bad, tmp_path / "cache", False)),
                         ("daemon", DaemonPublisher(engine=engine))])
    with pytest.raises(UserError, match=rf"^--to archive={bad} failed: ") as err:
        to.publish(image)
    assert "already" not in err.value.message
    assert not held(engine, image)  # the daemon after it never ran


@pytest.mark.integration  # the real Docker engine: the integration tier
def test_a_failure_after_a_success_says_what_was_already_published(tmp_path, image):
    out = tmp_path / "image.tar"
    to = MultiPublisher([(f"archive={out}", ArchivePublisher(out, tmp_path / "cache", False)),
                         ("daemon", DaemonPublisher(engine=dead_engine())),
                         ("archive=never.tar", ArchivePublisher(tmp_path / "never.tar", tmp_path / "cache", False))])
    with pytest.raises(UserError, match=rf"^--to daemon failed \(already published to archive={out}\): ") as err:
        to.publish(image)
    assert "\n" not in str(err.value)  # one line
    assert out.is_file() and not (tmp_path / "never.tar").exists()  # done before it; nothing after it


@pytest.mark.integration  # the real Docker engine: the integration tier
def test_one_destination_fails_with_its_own_message(tmp_path, image):
    """Negative control of the naming: alone, the destination's own error passes unchanged (image.push's errors
    keep the wording they had before --to)."""
    to = MultiPublisher([("daemon", DaemonPublisher(engine=dead_engine()))])
    with pytest.raises(UserError) as err:
        to.publish(image)
    assert not err.value.message.startswith("--to ")


def test_the_daemon_takes_a_fresh_image_while_it_is_assembled():
    """assembling() hands the daemon's Preloader to the assembler and joins it; no daemon, no callback."""
    daemon = DaemonPublisher()
    with MultiPublisher([("daemon", daemon)]).assembling() as early:
        assert early is daemon.early
    with MultiPublisher([("archive=x", ArchivePublisher(Path("x"), Path("c"), False))]).assembling() as early:
        assert early is None


@pytest.mark.integration  # the real Docker engine: the integration tier
def test_image_push_from_an_archive_to_the_daemon_and_an_archive_at_the_command_line(tmp_path, engine, image):
    """The front door end to end, no registry: --from-archive's layout goes to the engine, then to a new archive,
    byte-identical to the one it came from (same layout, the image's own date). Then a file that is not ours
    is refused before anything is published (nothing loaded for a fresh tag, the file untouched)."""
    source = write(image.layout, tmp_path / "in.tar", EPOCH)
    out = tmp_path / "out.tar"
    cache = {"SCHEDULER_BUILD_PATHS_CACHE_DIR": str(tmp_path / "cache")}
    proc = run(INV + ["image.push", "--from-archive", str(source), "--to", f"daemon,archive={out}", "--json"],
               cwd=tmp_path, **cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert [d["to"] for d in result["destinations"]] == ["daemon", f"archive={out}"]
    assert held(engine, image) and out.read_bytes() == source.read_bytes()

    foreign = tmp_path / "foreign.tar"
    foreign.write_text("not ours")
    fresh_tag = f"scheduler-build-test/multi:{uuid.uuid4().hex[:12]}"
    other = loadable_image(tmp_path / "other", fresh_tag)
    try:
        proc = run(INV + ["image.push", "--from-archive", str(write(other.layout, tmp_path / "other.tar", EPOCH)),
                          "--to", f"daemon,archive={foreign}"], cwd=tmp_path, **cache)
        assert_one_line(proc, 2, "is not as scheduler-build wrote it")
        assert "--force" not in proc.stderr  # image.push has no --force: the hint names none
        assert not held(engine, other) and foreign.read_text() == "not ours"
    finally:
        engine.remove_image(fresh_tag)
