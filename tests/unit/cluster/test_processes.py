"""Unit tests of the control-plane helpers: PKI, kubeconfigs, state, process control, config."""

from __future__ import annotations

import stat
import subprocess
import sys
import time

import pytest
import yaml

from scheduler_build.cluster import controlplane as cluster
from scheduler_build.cluster import pki as cluster_pki
from scheduler_build.cluster import processes
from scheduler_build.config import schedulerconfig
from testkit import e2e
from testkit import kubeobjects as kobj
from scheduler_build.errors import UserError


def test_pki_chains_to_the_ca_with_the_right_identities(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    paths = cluster_pki.generate_pki(tmp_path / "pki")
    ca = x509.load_pem_x509_certificate(paths["ca.crt"].read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca

    def load(role):
        cert = x509.load_pem_x509_certificate(paths[f"{role}.crt"].read_bytes())
        cert.verify_directly_issued_by(ca)
        return cert

    serving = load("apiserver")
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]
    assert "kubernetes.default.svc" in sans.get_values_for_type(x509.DNSName)
    admin = load("admin")
    assert admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    sched = load("scheduler")
    assert sched.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:kube-scheduler"
    for name in ("ca.key", "apiserver.key", "admin.key", "scheduler.key", "sa.key"):
        assert stat.S_IMODE(paths[name].stat().st_mode) == 0o600, name
    assert isinstance(ca.public_key(), ec.EllipticCurvePublicKey)
    assert b"PUBLIC KEY" in paths["sa.pub"].read_bytes()


def test_kubeconfig_is_self_contained(tmp_path):
    config = cluster_pki.kubeconfig("https://127.0.0.1:6443", b"CA", "system:kube-scheduler", b"CERT", b"KEY")
    path = cluster_pki.write_kubeconfig(tmp_path / "k", config)
    loaded = yaml.safe_load(path.read_text())
    assert loaded["current-context"] == cluster_pki.CLUSTER_NAME
    assert loaded["users"][0]["name"] == "system:kube-scheduler"
    assert set(loaded["users"][0]["user"]) == {"client-certificate-data", "client-key-data"}
    assert "certificate-authority-data" in loaded["clusters"][0]["cluster"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_state_round_trips(tmp_path):
    state = cluster.ClusterState(
        state_dir=str(tmp_path), server="https://127.0.0.1:1", etcd_url="http://127.0.0.1:2", apiserver_port=1,
        etcd_client_port=2, etcd_peer_port=3, apiserver_binary="/a", etcd_binary="/e", admin_kubeconfig="/k1",
        scheduler_kubeconfig="/k2", ca_file="/ca", version="v1.36.3",
        processes={"etcd": processes.ProcessRecord("etcd", 1, 2, ["/e"], "/l")},
    )
    cluster.save_state(state)
    assert cluster.load_state(tmp_path) == state


def test_corrupt_state_is_a_clear_error(tmp_path):
    (tmp_path / cluster.STATE_FILE).write_text("{not json")
    with pytest.raises(UserError, match="not a cluster state file"):
        cluster.load_state(tmp_path)


def test_down_of_nothing_is_a_no_op_and_a_foreign_dir_is_refused(tmp_path):
    assert cluster.down(tmp_path / "absent") == []
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("x")
    with pytest.raises(UserError, match="holds no state.json"):
        cluster.down(tmp_path / "mine")
    assert (tmp_path / "mine" / "precious.txt").exists()


def test_spawn_stop_and_pid_reuse_guard(tmp_path):
    rec = processes.spawn("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "s.log")
    assert processes.alive(rec)
    # A record whose start time does not match (a reused pid) is never signalled.
    foreign = processes.ProcessRecord("other", rec.pid, rec.start_ticks + 1, [], "")
    assert not processes.alive(foreign) and processes.stop(foreign) is False
    assert processes.alive(rec)
    assert processes.stop(rec, grace=5) is True
    assert not processes.alive(rec)


def test_stop_escalates_to_sigkill(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    rec = processes.spawn("stubborn", [sys.executable, "-c", code], tmp_path / "s.log")
    for _ in range(100):
        if "ready" in (tmp_path / "s.log").read_text():
            break
        time.sleep(0.05)
    started = time.monotonic()
    assert processes.stop(rec, grace=0.5) is True
    assert not processes.alive(rec)
    assert time.monotonic() - started < 30


def test_wait_http_fails_fast_when_the_process_dies(tmp_path):
    rec = processes.spawn("dies", [sys.executable, "-c", "print('boom: bad flag')"], tmp_path / "d.log")
    with pytest.raises(UserError, match="exited during startup") as err:
        processes.wait_http(f"http://127.0.0.1:{processes.free_port()}/health", rec, timeout=60)
    assert "\n" not in str(err.value)


def test_up_with_a_missing_apiserver_binary_is_a_clear_error(repo, tmp_path):
    proc = subprocess.run(["inv", "cluster.up", "--apiserver", str(tmp_path / "nope"), "--state-dir", str(tmp_path / "s")],
                          cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert "nope" in errors[0] and "inv build --component kube-apiserver" in errors[0]
    assert not (tmp_path / "s").exists()


def test_up_with_a_missing_etcd_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="etcd not found"):
        cluster.up(tmp_path / "apiserver", tmp_path / "s", etcd=str(tmp_path / "no-etcd"), timeout=5)
    assert not (tmp_path / "s").exists()


def test_scheduler_config_is_a_v1_second_scheduler():
    config = e2e.scheduler_config("acme", "/k", leader_elect=True, lease_namespace="ns1",
                                  extenders=[schedulerconfig.extender_entry("http://127.0.0.1:1", node_cache_capable=True)])
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["profiles"] == [{"schedulerName": "acme"}]
    assert config["leaderElection"]["resourceLock"] == "leases"
    assert config["leaderElection"]["resourceNamespace"] == "ns1"
    assert config["extenders"][0]["nodeCacheCapable"] is True
    assert "bindVerb" not in config["extenders"][0]
    text = yaml.safe_dump(config, sort_keys=True)
    assert yaml.safe_dump(yaml.safe_load(text), sort_keys=True) == text


def test_pod_and_node_bodies():
    node = kobj.node_body("n1", pods=5, labels={"a": "b"})
    assert node["status"]["allocatable"]["pods"] == "5"
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "n1", "a": "b"}
    pod = kobj.pod_body("p", "acme", labels={"x": "y"})
    assert pod["spec"]["schedulerName"] == "acme"
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "10m"


def test_inv_e2e_runs_the_e2e_marker():
    argv = e2e.pytest_argv("/py", k="side", verbose=True, exitfirst=True, junit="r.xml")
    assert argv[:5] == ["/py", "-m", "pytest", "-m", "e2e"]
    assert argv[argv.index("-k") + 1] == "side" and "-v" in argv and "-x" in argv and "--junitxml=r.xml" in argv


def test_bench_e2e_reads_bind_times_from_the_scheduler_log(repo):
    import importlib

    bench = importlib.import_module("bench.e2e_bench")
    log = "\n".join([
        'I1123 11:23:36.000000   1 schedule_one.go:481] "Successfully bound pod to node" pod="ns/a" node="n"',
        'I1123 11:23:36.500000   1 schedule_one.go:481] "Successfully bound pod to node" pod="other/x" node="n"',
        'I1123 11:23:38.000000   1 schedule_one.go:481] "Successfully bound pod to node" pod="ns/b" node="n"',
        'I1123 11:23:37.000000   1 schedule_one.go:481] "Successfully bound pod to node" pod="ns/c" node="n"',
    ])
    times = bench.bind_times(log, "ns")
    assert len(times) == 3
    assert bench.throughput(times) == pytest.approx(1.0)  # 2 intervals over 2 s
    assert bench.throughput(times[:1]) == 0.0
