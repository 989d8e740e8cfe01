"""image-info.json (image/info.py): the typed record the image stage writes and every publisher reads.

A small but real OCI layout (blobs named by their digests, a tagged index) stands in for a built
one; `image.push --from-archive` of a foreign, old or tampered record is one clear line, no traceback,
before any registry is contacted.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from scheduler_build.errors import UserError
from scheduler_build.image import oci
from scheduler_build.image.info import FILE_NAME, ImageInfo, PlatformEntry
from scheduler_build.publish import archive

from tests.integration.test_input_errors import INV, assert_one_line, run


def tiny_layout(root: Path) -> tuple[oci.Layout, ImageInfo]:
    """A one-platform layout whose record names blobs the layout holds."""
    lay = oci.Layout(root)
    blob = {name: lay.put(f"{name} of linux/amd64".encode()) for name in
            ("config", "layer", "sbom", "cyclonedx", "provenance")}
    manifest = oci.canonical({"schemaVersion": 2, "mediaType": oci.MANIFEST, "config": {"digest": blob["config"]}})
    manifest_digest = lay.put(manifest)
    index = oci.canonical({"schemaVersion": 2, "mediaType": oci.INDEX, "manifests": [
        {"mediaType": oci.MANIFEST, "digest": manifest_digest, "size": len(manifest), "platform": oci.platform_dict("amd64")}]})
    index_digest = lay.put(index)
    lay.write_index([{"mediaType": oci.INDEX, "digest": index_digest, "size": len(index), "annotations": {oci.REF_NAME: "v1"}}])
    entry = PlatformEntry(
        platform="linux/amd64", arch="amd64", image_id=blob["config"], manifest_digest=manifest_digest,
        manifest_size=len(manifest), layer_digest=blob["layer"], layer_size=1, binary_size=1, sbom="/d/k.spdx.json",
        sbom_sha256="00" * 32, sbom_manifest_digest=blob["sbom"], sbom_manifest_size=1, cyclonedx="/d/k.cdx.json",
        cyclonedx_manifest_digest=blob["cyclonedx"], cyclonedx_manifest_size=1, provenance_digest=blob["provenance"],
        local_tags=["acme/sched:v1-amd64"])
    info = ImageInfo(name="sched", repository="acme/sched", kubernetes_version="v1.36.3", tags=["v1"], inputs_key="ab" * 32,
                     source_date_epoch=1700000000, index_digest=index_digest, index_size=len(index), platforms=[entry])
    info.write(root)
    return lay, info


def test_record_round_trips_and_names_its_provenance(tmp_path):
    lay, info = tiny_layout(tmp_path / "layout")
    again = ImageInfo.of_layout(lay.root)
    assert again == info and again.to_json() == info.to_json()
    assert again.provenance() == {info.platforms[0].manifest_digest: info.platforms[0].provenance_digest}
    assert again.platforms[0].config_digest == info.platforms[0].image_id and again.platforms[0].local_tag == "acme/sched:v1-amd64"


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(schema=0), "is not a schema-1 image record"),
    (lambda d: d.pop("platforms"), "does not match this version's image record"),
    (lambda d: d["platforms"][0].update(provenance_digest="sha256:../../etc/passwd"), "platforms[0].provenance_digest is not"),
    (lambda d: d["platforms"][0].update(surprise=1), "does not match this version's image record"),
], ids=["old schema", "missing key", "not a digest", "foreign key"])
def test_a_foreign_or_old_record_is_one_user_error(tmp_path, change, message):
    lay, info = tiny_layout(tmp_path / "layout")
    data = info.to_dict()
    change(data)
    (lay.root / FILE_NAME).write_text(json.dumps(data))
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        ImageInfo.of_layout(lay.root)
    assert "inv image.build --force" in err.value.hint
    assert ImageInfo.previous(lay.root) is None  # a rebuild replaces it instead of trusting it


def _archive_with(tmp_path: Path, edit) -> Path:
    lay, info = tiny_layout(tmp_path / "layout")
    data = info.to_dict()
    edit(data)
    (lay.root / FILE_NAME).write_text(json.dumps(data))
    return archive.write(lay.root, tmp_path / "image.tar", 1700000000)


def test_from_archive_checks_the_record_against_the_archive(tmp_path):
    good = _archive_with(tmp_path / "good", lambda d: None)
    with archive.extracted(good) as directory:
        assert ImageInfo.of_layout(directory).tags == ["v1"]
    stray = "sha256:" + "ee" * 32
    tampered = _archive_with(tmp_path / "tampered", lambda d: d["platforms"][0].update(provenance_digest=stray))
    with pytest.raises(UserError, match=r"platforms\[0\].provenance_digest sha256:eeeeeeeeeeee is not in the archive"):
        with archive.extracted(tampered):
            pass
    # Every digest it names is a blob of the archive, but not its tagged index: another image's record.
    swapped = _archive_with(tmp_path / "swapped", lambda d: d.update(index_digest=d["platforms"][0]["layer_digest"]))
    with pytest.raises(UserError, match="the archive's tags point at"):
        with archive.extracted(swapped):
            pass


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["platforms"][0].update(manifest_digest="sha256:" + "ee" * 32), "is not in the archive"),
    (lambda d: d.update(schema=99), "is not a schema-1 image record"),
], ids=["tampered", "foreign"])
def test_image_push_from_archive_of_a_bad_record_is_one_line(tmp_path, edit, message):
    tar = _archive_with(tmp_path, edit)
    # Port 9 on loopback: nothing listens, and the record is refused before any connection is tried.
    proc = run(INV + ["image.push", "--from-archive", str(tar), "--registry", "127.0.0.1:9/acme/sched"])
    assert_one_line(proc, 2, message)
    assert "inv image.build" in proc.stderr


def test_archive_without_a_record_is_refused(tmp_path):
    lay, _ = tiny_layout(tmp_path / "layout")
    (lay.root / FILE_NAME).unlink()
    tar = archive.write(lay.root, tmp_path / "image.tar", 1700000000)
    with tarfile.open(tar) as t:
        assert FILE_NAME not in t.getnames()
    with pytest.raises(UserError, match=f"{FILE_NAME} is unreadable"):
        with archive.extracted(tar):
            pass


def test_cluster_load_of_a_layout_with_a_foreign_record_is_refused_before_the_node_is_touched(tmp_path, monkeypatch):
    from scheduler_build.cluster import load

    lay, info = tiny_layout(tmp_path / "layout")
    monkeypatch.setattr(load, "_ctr_import", lambda *a: pytest.fail("imported despite a foreign record"))
    (lay.root / FILE_NAME).write_text(json.dumps({**info.to_dict(), "schema": 7}))
    with pytest.raises(UserError, match="is not a schema-1 image record"):
        load._import_path(tmp_path / "ctd", lay.root, "")
