"""Units of `cluster.up --node`: ranges, generated configs, the pause image archive, image names."""

from __future__ import annotations

import ipaddress
import json
import tarfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from scheduler_build.cluster import containerd, controlplane, hosttraces, load, network
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


def test_containerd_config_is_version_3_with_the_nodes_settings_carried_over(tmp_path):
    """containerd 2's format: the CRI split into cri.v1.images / cri.v1.runtime, the pause image
    pinned as `sandbox`, the registries' hosts.toml directory, overlayfs, cgroupfs (no systemd),
    and the shim built with this containerd named explicitly (PATH has Debian's 1.6 shim)."""
    config = tomllib.loads(containerd.write_config(tmp_path).read_text())
    assert config["version"] == 3
    plugins = config["plugins"]
    assert "io.containerd.grpc.v1.cri" in plugins and "containerd" not in plugins["io.containerd.grpc.v1.cri"]
    images, runtime = plugins["io.containerd.cri.v1.images"], plugins["io.containerd.cri.v1.runtime"]
    assert images["pinned_images"]["sandbox"] == containerd.PAUSE_IMAGE and images["snapshotter"] == "overlayfs"
    assert images["registry"]["config_path"] == f"{tmp_path}/certs.d"
    assert plugins["io.containerd.internal.v1.opt"]["path"] == f"{tmp_path}/opt"  # not /opt/containerd
    assert runtime["restrict_oom_score_adj"] is True and runtime["netns_mounts_under_state_dir"] is True
    runc = runtime["containerd"]["runtimes"]["runc"]
    assert runc["runtime_path"] == str(containerd.binary(tmp_path, "containerd-shim-runc-v2"))
    assert runc["options"] == {"SystemdCgroup": False, "BinaryName": containerd.RUNC, "Root": f"{tmp_path}/runc"}
    assert runtime["cni"]["bin_dirs"] == [containerd.CNI_BIN]
    assert "io.containerd.nri.v1.nri" in config["disabled_plugins"]  # NRI would listen in /var/run/nri
    sockets = plugins["io.containerd.shim.v1.manager"]["socket_dir"]
    assert sockets == containerd.SHIM_SOCKETS and len(sockets) <= 42  # containerd refuses a longer one
    assert any(sockets.startswith(p + "/") for p in hosttraces.OUTSIDE_PATHS)  # `down` removes it
    # containerd 1.x's layout (version 2, sandbox_image under grpc.v1.cri) is gone
    text = (tmp_path / "containerd.toml").read_text()
    assert "sandbox_image" not in text and "version = 2" not in text


def test_the_runtime_is_pinned_static_and_cached_per_key(tmp_path, monkeypatch):
    """One home: gotool.installed_programs builds containerd, its shim and ctr in one `go install`
    (CGO off, upstream's static tags, the version stamped) keyed by version + flags, and reuses them."""
    from scheduler_build.golang import gotool

    calls = []

    def fake_compile(args, cwd, what, env):  # the real build is the node tests' (tests/node): minutes cold
        calls.append((args, env))
        for package in args[args.index("-ldflags") + 2:]:
            binary = Path(env["GOBIN"]) / package.split("@")[0].rsplit("/", 1)[-1]
            binary.write_text("#!/bin/sh\n")
            binary.chmod(0o755)

    monkeypatch.setattr(gotool, "compile_shown", fake_compile)
    assert containerd.build(tmp_path, cached_only=True) == {}
    built = containerd.build(tmp_path)
    assert list(built) == ["containerd", "containerd-shim-runc-v2", "ctr"]
    args, env = calls[0]
    assert env["CGO_ENABLED"] == "0" and "-trimpath" in args
    assert args[args.index("-tags") + 1] == ",".join(containerd.TAGS) and "no_btrfs" in containerd.TAGS
    assert f"-X {containerd.MODULE}/version.Version={containerd.VERSION}" in args[args.index("-ldflags") + 1]
    assert args[-3:] == [f"{containerd.MODULE}/cmd/{p}@{containerd.VERSION}" for p in containerd.PROGRAMS]
    assert built["containerd"].parent.name.startswith(f"containerd-{containerd.VERSION}-")
    assert containerd.build(tmp_path) == built and len(calls) == 1  # cached: no second build
    assert containerd.build(tmp_path, cached_only=True) == built


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
    from scheduler_build.doctor import checks as doctor

    debian = doctor.runtime_check("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3")
    assert debian.ok and not debian.required and debian.detail.startswith("containerd 1.6.20: no CRI RuntimeConfig")
    built = doctor.runtime_check("containerd github.com/containerd/containerd/v2 v2.4.2 abcdef0")
    assert built.ok and built.detail == "containerd 2.4.2 (answers CRI RuntimeConfig)"
    assert not doctor.runtime_check("garbage").ok  # negative control: an unreadable answer is not a runtime


def test_doctor_node_reports_the_containerd_the_node_runs(tmp_path, monkeypatch):
    """Not built yet: the pin, and that the first `cluster.up --node` builds it; built: its own
    `--version` (a stand-in script here answering as the real 2.4.2 build does; tests/node runs it)."""
    from scheduler_build.doctor import checks as doctor

    pending = doctor.node_runtime(tmp_path)
    assert pending.ok and pending.detail.startswith(f"containerd {containerd.VERSION.lstrip('v')} (answers CRI RuntimeConfig)")
    assert "not cached yet" in pending.detail
    stand_in = tmp_path / "containerd"
    stand_in.write_text("#!/bin/sh\necho containerd github.com/containerd/containerd/v2 v2.4.2\n")
    stand_in.chmod(0o755)
    monkeypatch.setattr(containerd, "build", lambda cache_dir, cached_only=False: {"containerd": stand_in})
    assert doctor.node_runtime(tmp_path).detail == "containerd 2.4.2 (answers CRI RuntimeConfig)"
    stand_in.write_text("#!/bin/sh\necho containerd github.com/containerd/containerd 1.6.20~ds1\n")
    assert not doctor.node_runtime(tmp_path).required  # negative control: a 1.x build is flagged for 1.38


# As the kubelet prints them (klog text format, cmd/kubelet/app/server.go getCgroupDriverFromCRI).
KUBELET_ANSWERED = ('I1125 13:02:11.418522   41230 server.go:1448] "Using cgroup driver setting received from the '
                    'CRI runtime" cgroupDriver="cgroupfs"\n')
KUBELET_FALLBACK = ('I1123 10:41:05.102193   18821 server.go:1425] "CRI implementation should be updated to support '
                    'RuntimeConfig. Falling back to using cgroupDriver from kubelet config."\n')


def test_the_runtime_config_check_reads_the_answer_and_fails_on_the_fallback():
    from tests.node import runtime_config

    assert runtime_config.driver_from_cri("I... starting\n" + KUBELET_ANSWERED) == "cgroupfs"
    # negative controls: containerd 1.6's Unimplemented path, and a log with neither line
    with pytest.raises(AssertionError, match="did not answer CRI RuntimeConfig"):
        runtime_config.driver_from_cri(KUBELET_FALLBACK)
    with pytest.raises(AssertionError, match="no 'Using cgroup driver"):
        runtime_config.driver_from_cri("I1125 13:02:11.418522   41230 server.go:1] \"Starting kubelet\"\n")


def test_doctor_node_reports_runc_beside_the_version_containerd_is_tested_with():
    from scheduler_build.doctor import checks as doctor

    debian = doctor.runc_check("runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev\n")
    assert debian.ok and not debian.required
    assert debian.detail.startswith(f"runc 1.1.5: containerd {containerd.VERSION.lstrip('v')} is tested with")
    tested = doctor.runc_check(f"runc version {containerd.RUNC_TESTED}\n")
    assert tested.ok and tested.detail == f"runc {containerd.RUNC_TESTED}"
    assert not doctor.runc_check("").ok  # negative control: no version is no runc
