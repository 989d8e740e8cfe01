"""Unit tests for the long-lived builder's per-build source tree (build/warm.py)."""

from __future__ import annotations


from scheduler_build.build import warm


def test_vendor_view_links_everything_but_the_overlaid_module(tmp_path):
    vendor = tmp_path / "vendor"
    for rel in ("modules.txt", "k8s.io/api/core/v1/types.go", "example.com/acme/underlay/pkg/old.go",
                "example.com/acme/other/x.go", "example.com/zeta/z.go"):
        (vendor / rel).parent.mkdir(parents=True, exist_ok=True)
        (vendor / rel).write_text(rel)
    snapshot = tmp_path / "snap"
    (snapshot / "pkg").mkdir(parents=True)
    (snapshot / "pkg/new.go").write_text("edited")
    view = tmp_path / "view"
    warm.vendor_view(vendor, view, {"example.com/acme/underlay": snapshot})
    assert (view / "modules.txt").read_text() == "modules.txt"
    assert (view / "k8s.io").is_symlink() and (view / "k8s.io/api/core/v1/types.go").is_file()
    # Siblings on the way down stay links to the vendor tree; the module itself is the snapshot.
    assert not (view / "example.com").is_symlink() and not (view / "example.com/acme").is_symlink()
    assert (view / "example.com/zeta").is_symlink() and (view / "example.com/acme/other/x.go").is_file()
    assert (view / "example.com/acme/underlay").resolve() == snapshot.resolve()
    assert (view / "example.com/acme/underlay/pkg/new.go").read_text() == "edited"
    assert not (view / "example.com/acme/underlay/pkg/old.go").exists()


def test_container_name_depends_on_image_volume_and_cache(tmp_path):
    name = warm.container_name("sha256:a", "vol", tmp_path)
    assert name.startswith("scheduler-build-builder-")
    assert len({name, warm.container_name("sha256:b", "vol", tmp_path), warm.container_name("sha256:a", "v2", tmp_path),
                warm.container_name("sha256:a", "vol", tmp_path / "x")}) == 4
    assert warm.container_name("sha256:a", "vol", tmp_path) == name
