"""Units of `cluster.up --node`: ranges, generated configs, the pause image archive, image names."""

from __future__ import annotations

import ipaddress
import json
import tarfile

import pytest

from scheduler_build.cluster import containerd, controlplane, load, network
from scheduler_build.cluster import node_config as cfg
from scheduler_build.errors import UserError


def test_overlapping_ranges_are_one_error_naming_both():
    with pytest.raises(UserError) as err:
        network.check_ranges([("route via eth9", ipaddress.ip_network("10.244.0.0/16"))])
    assert "10.244.0.0/24" in err.value.message and "eth9" in err.value.message


def test_the_docker_bridge_and_a_typical_lan_do_not_overlap():
    network.check_ranges([("docker0", ipaddress.ip_network("172.17.0.0/16")),
                          ("eth0", ipaddress.ip_network("192.168.1.0/24"))])


def test_kubelet_config_handles_this_machine_kind(tmp_path):
    config = cfg.kubelet_config(tmp_path, tmp_path / "c.sock", 1234)
    assert config["failCgroupV1"] is False and config["cgroupDriver"] == "cgroupfs"
    assert config["address"] == network.NODE_IP and config["healthzBindAddress"] == "127.0.0.1"
    assert str(config["volumePluginDir"]).startswith(str(tmp_path))


def test_kube_proxy_never_opens_nodeports_on_the_machines_interfaces(tmp_path):
    config = cfg.kube_proxy_config(tmp_path / "kc", 1, 2)
    assert config["nodePortAddresses"] == [f"{network.NODE_IP}/32"]
    assert config["mode"] == "iptables"


def test_containerd_config_is_private_and_restricts_oom_score_adj(tmp_path):
    path = containerd.write_config(tmp_path)
    text = path.read_text()
    assert f'address = "{tmp_path}/containerd.sock"' in text
    assert "restrict_oom_score_adj = true" in text and containerd.PAUSE_IMAGE in text
    conflist = json.loads((tmp_path / "cni/net.d/10-scheduler-build.conflist").read_text())
    assert conflist["plugins"][0]["bridge"] == network.BRIDGE


def test_pause_archive_is_a_named_oci_layout(tmp_path):
    binary = tmp_path / "pause"
    binary.write_bytes(b"\x7fELF fake")
    archive = containerd.oci_archive(binary, "localhost/x/pause:1", tmp_path / "p.tar")
    with tarfile.open(archive) as tar:
        index = json.load(tar.extractfile("index.json"))
        names = tar.getnames()
    assert index["manifests"][0]["annotations"]["io.containerd.image.name"] == "localhost/x/pause:1"
    assert "oci-layout" in names and len([n for n in names if n.startswith("blobs/")]) == 3


@pytest.mark.parametrize("ref,full", [
    ("busybox", "docker.io/library/busybox:latest"),
    ("scheduler-build/extender:0.1", "docker.io/scheduler-build/extender:0.1"),
    ("registry.example.com/acme/s:v1", "registry.example.com/acme/s:v1"),
    ("localhost/p:local", "localhost/p:local"),
    ("127.0.0.1:5000/a/b", "127.0.0.1:5000/a/b:latest"),
])
def test_image_names_are_normalized_like_containerd(ref, full):
    assert load.normalize(ref) == full


def test_apiserver_flags_with_a_node(tmp_path):
    argv = controlplane._apiserver_argv("kube-apiserver", tmp_path, "http://e", 1, node_ip="10.250.0.1")
    assert "--bind-address=10.250.0.1" in argv and "--endpoint-reconciler-type=lease" in argv
    assert not any(a.startswith("--disable-admission-plugins") for a in argv)
    plain = controlplane._apiserver_argv("kube-apiserver", tmp_path, "http://e", 1)
    assert "--bind-address=127.0.0.1" in plain and "--endpoint-reconciler-type=none" in plain


def test_down_removes_the_cgroups_runc_mirrors_under_the_unified_hierarchy(tmp_path, monkeypatch):
    # Hybrid cgroup layout (v1 controllers + v2 `unified`): up creates only the v1 roots, but runc
    # mirrors pod cgroups under unified/ too; a leftover there was seen after down on a fresh machine.
    from scheduler_build.cluster import hosttraces

    monkeypatch.setattr(hosttraces, "CGROUP_FS", tmp_path)
    for hierarchy in ("cpu", "memory", "unified"):
        (tmp_path / hierarchy / "scheduler-build" / "kubepods" / "besteffort" / "pod-1").mkdir(parents=True)
    (tmp_path / "unified" / "other").mkdir()
    assert [p.name for p in hosttraces.hierarchies()] == ["cpu", "memory"]
    removed = hosttraces.remove_cgroups("scheduler-build", pause=0)
    assert sorted(removed) == sorted(str(tmp_path / h / "scheduler-build") for h in ("cpu", "memory", "unified"))
    assert sorted(p.name for p in (tmp_path / "unified").iterdir()) == ["other"]


def test_restarting_a_component_of_no_node_is_one_clear_error(tmp_path):
    from scheduler_build.cluster import node

    with pytest.raises(UserError, match="has no node component kubelet") as exc:
        node.restart(tmp_path, "kubelet")
    assert "inv cluster.up --node" in exc.value.hint


def test_doctor_reports_the_runtime_version_and_what_1_38_needs():
    from scheduler_build import doctor

    debian = doctor.runtime_check("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3")
    assert debian.ok and not debian.required and debian.detail.startswith("containerd 1.6.20: no CRI RuntimeConfig")
    built = doctor.runtime_check("containerd github.com/containerd/containerd/v2 v2.4.2 abcdef0")
    assert built.ok and built.detail == "containerd 2.4.2 (answers CRI RuntimeConfig)"
    assert not doctor.runtime_check("garbage").ok  # negative control: an unreadable answer is not a runtime
