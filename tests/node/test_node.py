"""A real node (`inv cluster.up --node`): kubelet + containerd + kube-proxy + kube-controller-manager.

Everything is real: the components are our own builds, the pods run in containerd 2
(built from the Go module proxy) with Debian's runc on this machine, the Service goes through kube-proxy's iptables. The
module fixture brings the node up through the CLI once and always tears it down
(finally), then checks the machine is as it was: iptables v4/v6, links, processes.
Heavy: run alone (`pytest -m node tests/node`), root only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from scheduler_build.cluster import containerd, network
from tests.node import bench_job, debuggable, gitops, rotation, runtime_config, scenarios

ROOT = Path(__file__).resolve().parents[2]


def inv(*args: str, check: bool = True, timeout: float = 3600) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "invoke", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"inv {' '.join(args)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return out


def iptables_rules(tool: str) -> list[str]:
    """Rules and chains per table, counters dropped. A table holding nothing but empty built-in
    chains with policy ACCEPT is left out: the kernel creates it on first use (e.g. the
    mangle table) and it cannot be removed, but it changes nothing."""
    text = subprocess.run([f"{tool}-save"], capture_output=True, text=True).stdout
    tables: dict[str, list[str]] = {}
    table = ""
    for line in text.splitlines():
        if line.startswith("*"):
            table = line[1:]
            tables[table] = []
        elif line and not line.startswith(("#", "COMMIT")):
            tables[table].append(re.sub(r" ?\[\d+:\d+\]", "", line))
    kept = []
    for name, lines in tables.items():
        if all(re.fullmatch(r":[A-Z]+ ACCEPT", line) for line in lines):
            continue
        kept += [f"{name} {line}" for line in lines]
    return sorted(kept)


def links() -> dict[str, str]:
    """Link name -> its master (Docker's containers come and go: their veths are ignored)."""
    data = json.loads(subprocess.run(["ip", "-j", "link"], capture_output=True, text=True).stdout)
    return {entry["ifname"]: entry.get("master", "") for entry in data}


def processes_mentioning(text: str) -> list[str]:
    found = []
    for pid in Path("/proc").iterdir():
        if pid.name.isdigit():
            try:
                argv = (pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in argv:
                found.append(f"{pid.name}: {argv[:120]}")
    return found


def machine() -> dict:
    return {"iptables": iptables_rules("iptables"), "ip6tables": iptables_rules("ip6tables"),
            "links": {k for k, m in links().items() if m != "docker0"},
            "cgroups": sorted(str(p) for p in Path("/sys/fs/cgroup").glob("*/scheduler-build"))}


def test_a_leftover_node_interface_refuses_up_and_is_left_alone(tmp_path):
    """Runs before the node fixture (file order). A crashed node's interface makes `up` fail
    at once with one line, and the failed `up` removes nothing it did not create: not the
    interface (its owner's `cluster.down` does), and not its own lock."""
    if os.geteuid() != 0:
        pytest.skip("a node needs root")
    from scheduler_build.cluster import hosttraces

    assert not network.link_exists(network.DUMMY), "a node runs on this machine: stop it first"
    subprocess.run(["ip", "link", "add", network.DUMMY, "type", "bridge"], check=True)
    try:
        out = inv("cluster.up", "--node", "--state-dir", str(tmp_path / "cluster"), check=False)
        assert out.returncode != 0
        assert f"interface {network.DUMMY} already exists" in out.stderr
        assert "Traceback" not in out.stderr
        assert network.link_exists(network.DUMMY)
        assert not hosttraces.LOCK.exists()
    finally:
        subprocess.run(["ip", "link", "del", network.DUMMY], check=False)


@pytest.fixture(scope="module")
def node_registries(tmp_path_factory):
    """Two real registries (Debian's docker-registry) the node is told to pull from: plain HTTP,
    and TLS from a CA the test makes (trusted by no one else: the node must use --registry-ca)."""
    from testkit.registry_server import Registry

    work = tmp_path_factory.mktemp("node-registries")
    started = {"http": Registry(work / "http").start()}
    try:
        started["https"] = Registry(work / "https", tls=True).start()
        yield started
    finally:
        for registry in started.values():
            registry.stop()


@pytest.fixture(scope="module")
def node(tmp_path_factory, node_registries):
    if os.geteuid() != 0:
        pytest.skip("a node needs root")
    state_dir = tmp_path_factory.mktemp("node") / "cluster"
    before = machine()
    plain, tls = node_registries["http"], node_registries["https"]
    try:
        out = inv("cluster.up", "--node", "--state-dir", str(state_dir), "--registry", f"http://{plain.host}",
                  "--registry", f"https://{tls.host}", "--registry-ca", str(tls.ca))
        kubeconfig = out.stdout.strip().splitlines()[-1]
        yield state_dir, kubeconfig
    finally:
        down = inv("cluster.down", "--state-dir", str(state_dir), check=False)
        after = machine()
        leftovers = processes_mentioning(str(state_dir))
        assert down.returncode == 0, down.stderr[-2000:]
        assert leftovers == []
        assert not state_dir.exists()
        assert after == before


def kubectl_apply(kubeconfig: str, docs: list[dict]):
    from kubernetes import client, utils

    from scheduler_build import kubeclient

    api = kubeclient.from_kubeconfig(kubeconfig)
    for doc in docs:
        utils.create_from_dict(api, doc)
    return client.AppsV1Api(api), client.CoreV1Api(api)


def wait(pred, timeout=180, what=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def test_status_lists_the_node_and_its_components(node):
    state_dir, kubeconfig = node
    status = json.loads(inv("cluster.status", "--state-dir", str(state_dir)).stdout)
    assert status["ready"] and status["running"]
    assert set(status["node"]["processes"]) == {"containerd", "kubelet", "kube-proxy", "kube-controller-manager", "kube-scheduler", "coredns"}
    assert all(status["node"]["processes"].values())
    assert kubeconfig.endswith("admin.kubeconfig") and network.NODE_IP in Path(kubeconfig).read_text()


def test_the_node_runs_containerd_2_which_answers_cri_runtime_config(node):
    """Issue 23: the kubelet took its cgroup driver from the runtime's CRI RuntimeConfig answer
    (containerd 2; Debian's 1.6 answers Unimplemented and the kubelet logs its fallback, which
    KEP-4033 removes), the node reports the pinned containerd, and `doctor --node` says so."""
    from kubernetes import client

    from scheduler_build import kubeclient

    state_dir, kubeconfig = node
    assert runtime_config.driver_from_cri((state_dir / "logs" / "kubelet.log").read_text()) == "cgroupfs"
    info = client.CoreV1Api(kubeclient.from_kubeconfig(kubeconfig)).read_node("scheduler-build-node").status.node_info
    assert info.container_runtime_version == f"containerd://{containerd.VERSION.lstrip('v')}"
    checks = {c["name"]: c for c in json.loads(inv("doctor", "--node", "--json", check=False).stdout)}
    assert checks["container runtime"]["detail"] == f"containerd {containerd.VERSION.lstrip('v')} (answers CRI RuntimeConfig)"


def test_nothing_listens_on_the_machines_interfaces(node):
    state_dir, _ = node
    ours = {line.split(":")[0] for line in processes_mentioning(str(state_dir))}
    listening = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout.splitlines()
    bad = []
    for line in listening:
        pids = set(re.findall(r"pid=(\d+)", line))
        if pids & ours:
            local = line.split()[3]
            host = local.rsplit(":", 1)[0].strip("[]")
            if host not in ("127.0.0.1", "::1", network.NODE_IP):
                bad.append(line)
    assert ours and bad == []


def test_a_loaded_image_runs_as_a_deployment_behind_a_service(node, tmp_path):
    state_dir, kubeconfig = node
    archive = containerd.oci_archive(containerd.pause_binary(Path.home() / ".cache" / "scheduler-build"),
                                     "localhost/node-test/loaded:1", tmp_path / "loaded.tar")
    loaded = inv("cluster.load", "--state-dir", str(state_dir), "--", str(archive)).stdout.split()
    assert loaded == ["localhost/node-test/loaded:1"]
    labels = {"app": "loaded"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "loaded", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
                      "metadata": {"labels": labels}, "spec": {"containers": [{
                          "name": "c", "image": "localhost/node-test/loaded:1", "imagePullPolicy": "Never",
                          "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True,
                                              "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}}}}
    apps, core = kubectl_apply(kubeconfig, [deployment])

    def available():
        status = apps.read_namespaced_deployment("loaded", "default").status
        return (status.available_replicas or 0) == 2

    wait(available, what="Deployment loaded Available")
    pods = core.list_namespaced_pod("default", label_selector="app=loaded").items
    assert all(p.status.pod_ip.startswith("10.244.0.") for p in pods)
    assert all(p.spec.node_name == "scheduler-build-node" for p in pods)
    # the pods' shims listen in the node's own socket directory, not the machine's /run/containerd/s
    assert len(list(Path(containerd.SHIM_SOCKETS).iterdir())) >= 2


def test_loading_a_missing_image_is_one_clear_error(node):
    state_dir, _ = node
    out = inv("cluster.load", "--ref", "no-such-image/anywhere:0", "--state-dir", str(state_dir), check=False)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "no-such-image/anywhere:0" in out.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_node_pulls_what_image_push_pushed(node, node_registries, scheme):
    """As a real cluster gets its images: image.push to a registry on 127.0.0.1, then a pod naming
    the pushed index by digest with imagePullPolicy Always; the node's containerd pulls it through
    the hosts.toml cluster.up wrote (plain HTTP, or TLS verified against --registry-ca)."""
    state_dir, kubeconfig = node
    registry = node_registries[scheme]
    status = json.loads(inv("cluster.status", "--state-dir", str(state_dir)).stdout)
    assert f"{scheme}://{registry.host}" in status["node"]["registries"]
    push = ["image.push", "--spec", SPEC, "--registry", f"{registry.host}/acme/underlay-scheduler", "--json"]
    pushed = json.loads(inv(*push, *(["--ca-cert", str(registry.ca)] if registry.ca else [])).stdout)
    reference = pushed["references"][0]
    name = f"pulled-{scheme}"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"restartPolicy": "Never", "containers": [{
               "name": "c", "image": reference, "imagePullPolicy": "Always", "args": ["--version"]}]}}
    _, core = kubectl_apply(kubeconfig, [pod])
    try:
        wait(lambda: core.read_namespaced_pod(name, "default").status.phase in ("Succeeded", "Failed"),
             what=f"pod {name} done")
        got = core.read_namespaced_pod(name, "default").status
        assert got.phase == "Succeeded", got.container_statuses
        assert got.container_statuses[0].image_id.endswith(pushed["index_digest"]), got.container_statuses[0].image_id
        assert f"Kubernetes {stamped_spec_version()}" in core.read_namespaced_pod_log(name, "default")
        events = core.list_namespaced_event("default", field_selector=f"involvedObject.name={name}").items
        assert any(e.reason == "Pulled" for e in events), [(e.reason, e.message) for e in events]
    finally:
        core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


# Issue 43: bench.perf's shards as one Indexed Job pulled from the plain registry, then its caller stopped.
def test_bench_perf_on_the_node_runs_one_indexed_job_merges_it_and_sigterm_deletes_a_running_one(node, node_registries,
                                                                                                  tmp_path):
    bench_job.runs_as_one_indexed_job_and_merges(node[1], node_registries["http"].host, tmp_path)
    bench_job.sigterm_of_the_caller_deletes_its_job(node[1], node_registries["http"].host, tmp_path)


def test_a_second_node_cluster_is_refused(node, tmp_path):
    out = inv("cluster.up", "--node", "--state-dir", str(tmp_path / "second"), check=False, timeout=1800)
    assert out.returncode != 0
    assert "already runs on this machine" in out.stderr
    assert not (tmp_path / "second").exists()
    assert yaml.safe_load(Path(node[1]).read_text())["clusters"]


SPEC = "examples/underlay/scheduler.yaml"


def stamped_spec_version() -> str:
    """The version the example spec's build stamps: its minor resolved to the suite's pinned release
    (tests/versions.yaml), with its versionSuffix, as the build stage stamps it."""
    from conftest import TEST_K8S_VERSION
    from scheduler_build import spec as spec_mod
    from scheduler_build.build.pipeline import stamped_version

    return stamped_version(TEST_K8S_VERSION, spec_mod.load(Path(__file__).resolve().parents[2] / SPEC).version_suffix)


def test_the_rendered_scheduler_and_extender_run_and_schedule_through_cluster_dns(node):
    """The done-when path: image.build + image.extender (cached when built), cluster.load --spec,
    inv deploy --spec; then a pod naming the custom scheduler is bound through the extender,
    which the scheduler pod reaches by its Service DNS name (CoreDNS), and runs."""
    state_dir, kubeconfig = node
    inv("image.build", "--spec", SPEC)
    inv("image.extender")
    loaded = inv("cluster.load", "--spec", SPEC, "--state-dir", str(state_dir)).stdout.split()
    assert loaded[1] == "registry.example.com/acme/underlay-extender:0.1.0"
    inv("deploy", "--spec", SPEC, "--kubeconfig", kubeconfig, "--timeout", "300")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "custom", "namespace": "default"},
           "spec": {"schedulerName": "underlay-scheduler", "containers": [{
               "name": "c", "image": containerd.PAUSE_IMAGE, "imagePullPolicy": "Never"}]}}
    _, core = kubectl_apply(kubeconfig, [pod])
    wait(lambda: core.read_namespaced_pod("custom", "default").status.phase == "Running", what="pod custom Running")
    # The Scheduled event trails the binding (a buffered broadcaster): wait for it, then check who sent it.
    wait(lambda: any(e.reason == "Scheduled" for e in core.list_namespaced_event(
        "default", field_selector="involvedObject.name=custom").items), what="the Scheduled event of custom")
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=custom").items
    assert any(e.reason == "Scheduled" and "underlay-scheduler" in (e.reporting_component or e.source.component or "")
               for e in events), [(e.reason, e.reporting_component, e.source.component) for e in events]

    # Nobody but the scheduler talks to the extender: a pod of its own (the extender's image has
    # python3) calls the filter and bind verbs through the Service, with no client certificate, and
    # in plain HTTP; every attempt fails at the TLS handshake, while the pod above was scheduled
    # through the extender (filter is not ignorable) over mutual TLS.
    outsider = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "outsider", "namespace": "default"},
                "spec": {"restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "registry.example.com/acme/underlay-extender:0.1.0",
                    "imagePullPolicy": "Never", "command": ["/usr/bin/python3", "-c", OUTSIDER]}]}}
    kubectl_apply(kubeconfig, [outsider])
    wait(lambda: core.read_namespaced_pod("outsider", "default").status.phase in ("Succeeded", "Failed"),
         what="pod outsider done")
    results = core.read_namespaced_pod_log("outsider", "default").strip().splitlines()
    assert len(results) == 3 and all(line.startswith("refused:") for line in results), results
    # the TLS attempts fail in the handshake: the alert (usually "tlsv13 alert certificate required")
    # or the connection the server dropped, never an HTTP answer
    handshake = {"SSLError", "SSLEOFError", "SSLZeroReturnError", "ConnectionResetError", "BrokenPipeError",
                 "RemoteDisconnected"}
    assert all(line.split()[2] in handshake for line in results[:2]), results
    second = dict(pod, metadata={"name": "custom-2", "namespace": "default"})
    kubectl_apply(kubeconfig, [second])
    wait(lambda: core.read_namespaced_pod("custom-2", "default").status.phase == "Running", what="pod custom-2 Running")


# Run inside the outsider pod: one line per attempt, "refused: <why>" or "answered: <status>".
OUTSIDER = r"""
import http.client, json, ssl
host, port = "underlay-scheduler-extender.underlay-system.svc", 8888
body = json.dumps({"PodName": "custom", "PodNamespace": "default", "PodUID": "x", "Node": "scheduler-build-node"})
def attempt(verb, tls):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    conn = (http.client.HTTPSConnection(host, port, context=ctx, timeout=10) if tls
            else http.client.HTTPConnection(host, port, timeout=10))
    try:
        conn.request("POST", "/" + verb, body, {"Content-Type": "application/json"})
        print("answered:", verb, conn.getresponse().status, flush=True)
    except Exception as exc:
        print("refused:", verb, type(exc).__name__, exc, flush=True)
attempt("filter", True)
attempt("bind", True)
attempt("filter", False)
"""


# After the example is deployed (above): the same node, the same Deployments.
def test_deploy_diagnoses_an_image_missing_on_the_node(node, tmp_path):
    scenarios.image_missing(node[1], tmp_path)


def test_deploy_diagnoses_a_crash_loop_with_its_last_log_lines(node, tmp_path):
    scenarios.crash_loop(node[1], tmp_path)


def test_scheduler_pod_deleted_replacement_takes_the_lease_no_pod_bound_twice(node):
    scenarios.scheduler_pod_deleted(node[1])


def test_kubelet_restarted_pods_keep_running(node):
    scenarios.kubelet_restarted(node[1], node[0])


def test_extender_replica_killed_the_service_keeps_answering_no_pod_lost(node):
    scenarios.extender_replica_killed(node[1])


def test_pods_of_ours_keep_the_underlay_quota_default_schedulers_left_alone(node):
    scenarios.underlay_quota(node[1])


def test_rotate_certs_while_pods_are_scheduled_through_the_extender(node):
    rotation.rotate_certs_while_scheduling(node[1])


# Issue 20: the rendered output without `inv deploy`, beside the example (names of their own).
def test_gitops_plain_render_applied_with_kubectl_apply_k_schedules_through_the_extender(node, tmp_path):
    gitops.kubectl_apply_k(node[1], node[0], tmp_path)


def test_helm_install_of_config_chart_schedules_through_the_extender(node, tmp_path):
    gitops.helm_install(node[1], node[0], tmp_path)


# Issue 32, last: it replaces the example's release Deployment with the debuggable build of the same names.
def test_debuggable_build_through_deploy_records_an_opted_in_pod_explain_reads(node, tmp_path):
    debuggable.deployed_and_explained(node[1], node[0], tmp_path)
