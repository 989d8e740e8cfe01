"""--to, decided in inputs/publish.py: the destinations in order, parsed strictly by the DESTINATIONS table, and the
shorthands (image.build --oci-archive FILE) deciding into the same list. Bad input is one line naming the item and
listing the valid destinations; at the command line it exits 2 with no traceback, before any work."""

from __future__ import annotations

import pytest

from scheduler_build.errors import UserError
from scheduler_build.inputs import publish
from scheduler_build.inputs.publish import ArchiveInputs, DaemonInputs, PushInputs, ToInputs

from tests.integration.test_input_errors import INV, assert_one_line, run

ALL = "valid: daemon, registry, archive=FILE"
SETTINGS = {"registry": {"url": "127.0.0.1:5000/acme/sched"}}


def test_destinations_in_the_order_named():
    parsed = publish.parse_to(" registry, daemon ,archive=out/image.tar")
    assert [(r.name, r.file) for r in parsed] == [("registry", ""), ("daemon", ""), ("archive", "out/image.tar")]


@pytest.mark.parametrize("text, says", [
    ("docker", "unknown destination 'docker'"),
    ("daemon,Registry", "unknown destination 'Registry'"),
    ("daemon,registry,daemon", "'daemon' is named twice"),
    ("archive=a.tar,archive=b.tar", "'archive' is named twice"),
    ("archive", "archive needs a file: archive=FILE"),
    ("archive=", "archive needs a file: archive=FILE"),
    ("daemon=now", "daemon takes no value ('daemon=now')"),
    ("daemon,,registry", "item 2 of 3 is empty"),
    ("daemon,", "item 2 of 2 is empty"),
    ("", "names no destination"),
], ids=["unknown", "case", "duplicate", "two archives", "archive bare", "archive empty file", "value on daemon",
        "empty item", "trailing comma", "empty"])
def test_bad_to_is_one_line_naming_the_item_and_the_valid_ones(text, says):
    with pytest.raises(UserError) as err:
        publish.parse_to(text)
    assert err.value.message == f"--to {text!r}: {says}" and err.value.hint == ALL
    assert "\n" not in str(err.value)


def test_image_build_takes_no_registry_and_its_shorthand_decides_into_the_same_list(tmp_path):
    with pytest.raises(UserError, match="unknown destination 'registry'") as err:
        publish.parse_to("registry", publish.BUILD_DESTINATIONS)
    assert err.value.hint == "valid: daemon, archive=FILE"
    shorthand = [ToInputs("archive", "b.tar", "--oci-archive")]
    assert [r.name for r in publish.parse_to("daemon", publish.BUILD_DESTINATIONS, shorthand)] == ["daemon", "archive"]
    with pytest.raises(UserError, match=r"'archive' is named twice \(also by --oci-archive\)"):
        publish.parse_to("archive=a.tar", publish.BUILD_DESTINATIONS, shorthand)
    c = {"paths": {"cache_dir": str(tmp_path / "cache")}}
    assert publish.build_destinations(c, None, None) == [DaemonInputs()]  # the default: the engine, as before --to
    out = tmp_path / "image.tar"
    both = publish.build_destinations(c, None, str(out))  # --oci-archive alone: the engine and the file, as before
    assert both == [DaemonInputs(), ArchiveInputs(out, tmp_path / "cache", False)] and both[1].to == f"archive={out}"
    assert publish.build_destinations(c, f"archive={out}", None) == [ArchiveInputs(out, tmp_path / "cache", False)]


def test_an_archive_not_ours_is_refused_before_any_work_unless_forced(tmp_path):
    out = tmp_path / "image.tar"
    out.write_text("a file scheduler-build did not write")
    c = {"paths": {"cache_dir": str(tmp_path / "cache")}}
    with pytest.raises(UserError, match=f"^--to archive {tmp_path}: image.tar is not as scheduler-build wrote it") as err:
        publish.build_destinations(c, f"archive={out}", None)
    assert "--force" in err.value.hint  # image.build has one
    with pytest.raises(UserError, match="is not as scheduler-build wrote it") as err:
        publish.push_destinations(c, publish.parse_to(f"archive={out}"), spec=None)
    assert "--force" not in err.value.hint  # image.push has none: its refusal names no flag it lacks
    assert out.read_text() == "a file scheduler-build did not write"
    assert publish.build_destinations(c, f"archive={out}", None, force=True)[0].replacing


def test_push_destinations_decide_the_registry_in_order_and_refuse_an_unused_registry_flag():
    decided = publish.push_destinations(SETTINGS, publish.parse_to("daemon,registry"), spec=None)
    assert [type(d) for d in decided] == [DaemonInputs, PushInputs] and decided[1].registry.target.name == "127.0.0.1:5000/acme/sched"
    for flags, named in [({"sign": True}, "--sign"), ({"registry": "127.0.0.1:5000/x"}, "--registry"),
                         ({"insecure": True}, "--insecure"), ({"ca_cert": "ca.crt"}, "--ca-cert")]:
        with pytest.raises(UserError, match=f"^{named} applies to the registry, and --to daemon does not name it; add registry to --to, or drop the flag$"):
            publish.push_destinations(SETTINGS, publish.parse_to("daemon"), spec=None, **flags)
    assert publish.push_destinations(SETTINGS, publish.parse_to("daemon"), spec=None) == [DaemonInputs()]  # control


@pytest.mark.parametrize("argv, says", [
    (["image.push", "--to", "daemon,docker"], "unknown destination 'docker'"),
    (["image.push", "--to", "archive"], "archive needs a file"),
    (["image.push", "--to", "daemon", "--sign"], "--sign applies to the registry"),
    (["image.build", "--to", "registry"], "unknown destination 'registry'"),
    (["image.build", "--to", "archive=a.tar", "--oci-archive", "b.tar"], "'archive' is named twice"),
], ids=["push unknown", "push archive bare", "push sign without registry", "build registry", "build duplicate"])
def test_at_the_command_line_bad_to_exits_2_with_one_line(tmp_path, argv, says):
    proc = run(INV + argv, cwd=tmp_path)
    assert_one_line(proc, 2, says)
    assert "valid: daemon" in proc.stderr or "--sign" in says
