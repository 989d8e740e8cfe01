"""`inv bench.e2e --node`: the deployed scheduler pod vs the same binary as a host process, one real node.

One `inv cluster.up --node` cluster with the example spec deployed as users deploy it
(`inv image.build --spec`, `inv image.extender`, `inv cluster.load --spec`, `inv deploy --spec`):
the scheduler pod and the reference extender behind its Service, mutual TLS between them.
Two variants, in turn and repeated round-robin so machine noise hits each alike, each on
its own namespace of pods created before its scheduler starts (creation never limits the rate):
  pod   the scheduler Deployment scaled from 0 to 1: the image's binary in its container,
        in-cluster credentials, the extender by its Service DNS name;
  host  the same build (`inv build --spec`, the binary the image packages) as a host process,
        with the deployed ConfigMap's configuration, the ServiceAccount's identity (a token),
        the same Secrets' client certificate, the extender through the same Service (its
        ClusterIP, the certificate checked against the Service's DNS name).
Throughput as in bench.e2e: (binds - 1) / (last bind - first bind) from the scheduler's own
"Successfully bound pod to node" log lines (the pod's log through the API server). Each run goes
to the raw file (bench/record.py: measure "throughput", side "pod" or "host", pods_per_second).

Where pods go: one real node cannot run hundreds of pods (kubelet maxPods is 110, and starting
them would load this 2-core machine more than the schedulers do), so as in bench.e2e the pods
are bound only, to fake Nodes (API objects, no kubelet). Each pod selects them by a label the
real node does not carry, so nothing lands on the real node and the kubelet stays idle. The
node's kube-controller-manager marks Nodes without a kubelet unreachable after its grace period
and taints them; the bench pods tolerate every taint, so both variants see the same feasible
nodes throughout (and no pod is evicted).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench import record
from bench.e2e_bench import bind_span, bind_times, throughput
from scheduler_build.errors import UserError
from scheduler_build.progress import log

REPO = Path(__file__).resolve().parent.parent
SPEC = "examples/underlay/scheduler.yaml"
NS, SCHEDULER, EXTENDER = "underlay-system", "underlay-scheduler", "underlay-scheduler-extender"
SCHEDULER_PODS = "app.kubernetes.io/name=underlay-scheduler,app.kubernetes.io/component=scheduler"
FAKE_LABEL = {"bench.scheduler-build.io/fake": "true"}
# Both quotas do their real work: the example plugin's (its pluginConfig's labels) and the
# reference extender's (its built-in labels); capacity 10 per node for each.
CAPACITY_LABELS = {"underlay.acme.example.com/capacity": "10", "underlay.example.com/capacity": "10"}
POD_LABEL = {"underlay.acme.example.com/needs-ip": "true", "underlay.example.com/ip": "true"}
VARIANTS = {"pod": "deployed scheduler pod", "host": "host process, same binary and config"}


def _inv(*args: str, timeout: float = 3600) -> str:
    """Run an inv task as a user would; its stdout, or a UserError with the tail of its stderr."""
    done = subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise UserError(f"bench.e2e --node: inv {' '.join(args[:2])} failed: {last}",
                        "run that task alone to see why (a node cluster already running here must be stopped first)")
    return done.stdout


def pod_body(name: str) -> dict:
    """A pod of our scheduler for fake nodes only: bound, never run (see the module docstring)."""
    from testkit import kubeobjects as kobj

    body = kobj.pod_body(name, SCHEDULER, labels=dict(POD_LABEL))
    body["spec"]["nodeSelector"] = dict(FAKE_LABEL)
    body["spec"]["tolerations"] = [{"operator": "Exists"}]
    return body


def deployed_config(api, qps: int = 0) -> dict:
    """The scheduler's configuration as deployed (its ConfigMap); with qps, first set its client
    QPS and burst to that in the ConfigMap (the pod reads it when the Deployment scales up)."""
    from kubernetes import client as k

    core, apps = k.CoreV1Api(api), k.AppsV1Api(api)
    dep = apps.read_namespaced_deployment(SCHEDULER, NS)
    name = next(v for v in dep.spec.template.spec.volumes if v.config_map).config_map.name
    ((key, text),) = core.read_namespaced_config_map(name, NS).data.items()
    config = yaml.safe_load(text)
    if qps:
        config.setdefault("clientConnection", {}).update(qps=qps, burst=qps)
        core.patch_namespaced_config_map(name, NS, {"data": {key: yaml.safe_dump(config, sort_keys=False)}})
    return config


def host_config(api, work: Path, kubeconfig: str, config: dict) -> tuple[dict, Path]:
    """The deployed configuration for a host process, and a kubeconfig with the ServiceAccount's token."""
    from kubernetes import client as k

    core, apps = k.CoreV1Api(api), k.AppsV1Api(api)
    dep = apps.read_namespaced_deployment(SCHEDULER, NS)
    config = copy.deepcopy(config)
    account = dep.spec.template.spec.service_account_name
    token = core.create_namespaced_service_account_token(
        account, NS, {"spec": {"expirationSeconds": 7200}}).status.token
    admin = yaml.safe_load(Path(kubeconfig).read_text())
    cluster = admin["clusters"][0]["cluster"]
    sa_kubeconfig = work / "scheduler-sa.kubeconfig"
    sa_kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "node", "cluster": cluster}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "node", "user": "sa"}}]}))
    os.chmod(sa_kubeconfig, 0o600)
    config["clientConnection"]["kubeconfig"] = str(sa_kubeconfig)
    tls = work / "extender-tls"
    tls.mkdir(mode=0o700)
    for secret, key, out in ((f"{EXTENDER}-tls-ca", "ca.crt", "ca.crt"), (f"{EXTENDER}-tls-client", "tls.crt", "client.crt"),
                             (f"{EXTENDER}-tls-client", "tls.key", "client.key")):
        (tls / out).write_bytes(base64.b64decode(core.read_namespaced_secret(secret, NS).data[key]))
    service = core.read_namespaced_service(EXTENDER, NS)
    for entry in config.get("extenders") or []:
        host_port = entry["urlPrefix"].split("://", 1)[1]
        port = host_port.rsplit(":", 1)[1]
        entry["urlPrefix"] = f"https://{service.spec.cluster_ip}:{port}"
        entry["tlsConfig"] = {"certFile": str(tls / "client.crt"), "keyFile": str(tls / "client.key"),
                              "caFile": str(tls / "ca.crt"), "serverName": host_port.rsplit(":", 1)[0]}
    return config, sa_kubeconfig


def _scale(api, replicas: int) -> None:
    """Scale the scheduler Deployment; at 0, wait until its pod is gone (no scheduler of this name runs)."""
    from kubernetes import client as k

    from testkit import kubeobjects as kobj

    apps, core = k.AppsV1Api(api), k.CoreV1Api(api)
    apps.patch_namespaced_deployment_scale(SCHEDULER, NS, {"spec": {"replicas": replicas}})
    if replicas == 0:
        kobj.wait_until(lambda: not core.list_namespaced_pod(NS, label_selector=SCHEDULER_PODS).items, 180,
                        what="the scheduler pod gone")


def _settle(api, names: list[str], timeout: float = 240) -> None:
    """Wait until kube-controller-manager has marked every fake node unreachable (its grace period,
    then one status update and one taint per node): that burst of writes is over before any
    variant is measured, instead of landing on whichever runs first."""
    from kubernetes import client as k

    core = k.CoreV1Api(api)
    want = set(names)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tainted = {n.metadata.name for n in core.list_node(label_selector="bench.scheduler-build.io/fake=true").items
                   if any(t.key == "node.kubernetes.io/unreachable" for t in n.spec.taints or [])}
        if tainted >= want:
            return
        time.sleep(5)
    log(f"    the fake nodes were not all marked unreachable within {timeout:g}s; measuring anyway")


def run_pod(api, name: str, pods: int) -> tuple[list[float], float]:
    """Scale the Deployment 0 -> 1 with the pods waiting; bind times from the new pod's log."""
    from kubernetes import client as k

    from testkit import kubeobjects as kobj

    core = k.CoreV1Api(api)
    started = time.monotonic()
    _scale(api, 1)
    kobj.wait_bound(api, name, pods, 900)
    wall = time.monotonic() - started
    (pod,) = core.list_namespaced_pod(NS, label_selector=SCHEDULER_PODS).items
    text = core.read_namespaced_pod_log(pod.metadata.name, NS)
    _scale(api, 0)
    return bind_times(text, name), wall


def run_host(api, name: str, pods: int, binary: Path, config: dict, work: Path) -> tuple[list[float], float]:
    from testkit import e2e
    from testkit import kubeobjects as kobj

    started = time.monotonic()
    sched = e2e.start_scheduler(binary, config, work, name)
    try:
        kobj.wait_bound(api, name, pods, 900)
        wall = time.monotonic() - started
    finally:
        sched.stop()
    return bind_times(sched.log_text(), name), wall


def measure(api, kubeconfig: str, binary: Path, work: Path, pods: int, nodes: int, repeats: int, qps: int) -> dict:
    from kubernetes import client as k

    from testkit import kubeobjects as kobj

    core = k.CoreV1Api(api)
    results: dict = {"pods": pods, "nodes": nodes, "repeats": repeats, "runs": {v: [] for v in VARIANTS}}
    log(f"    creating {nodes} fake nodes")
    names = kobj.create_nodes(api, [kobj.node_body(f"bench-{i}", labels={**FAKE_LABEL, **CAPACITY_LABELS})
                                    for i in range(nodes)])
    log("    waiting for kube-controller-manager to mark the fake nodes unreachable (about a minute)")
    _settle(api, names)
    results["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
    _scale(api, 0)
    deployed = deployed_config(api, qps)
    results["client_qps_burst"] = [deployed["clientConnection"].get("qps"), deployed["clientConnection"].get("burst")]
    config, _ = host_config(api, work, kubeconfig, deployed)
    for rep in range(repeats):
        for v in VARIANTS:
            name = f"bench-node-{v}-{rep}"
            kobj.ensure_namespace(api, name)
            log(f"    [{rep + 1}/{repeats}] {VARIANTS[v]}: creating {pods} pods")
            kobj.create_pods(api, name, [pod_body(f"p{i}") for i in range(pods)])
            times, wall = (run_pod(api, name, pods) if v == "pod" else run_host(api, name, pods, binary, config, work))
            rate = throughput(times)
            record.run("throughput", v, bind_span(times), pods_per_second=round(rate, 3), binds=len(times))
            results["runs"][v].append({"pods_per_second": round(rate, 1), "binds": len(times),
                                       "wall_seconds_from_start": round(wall, 2)})
            log(f"        {rate:.1f} pods/s ({len(times)} binds)")
            kobj.force_delete_pods(api, name)
            core.delete_namespace(name)
    _scale(api, 1)
    return results


def run(pods: int = 300, nodes: int = 100, repeats: int = 1, qps: int = 0) -> dict:
    """Both variants on one node cluster of their own; qps (0: the spec's) sets the client QPS and burst of both."""
    if pods > nodes * 10:
        raise UserError(f"--pods {pods} exceeds the fake nodes' underlay capacity ({nodes} nodes x 10)",
                        f"use --nodes {(pods + 9) // 10} or more")
    from testkit import kubeobjects as kobj

    work = Path(tempfile.mkdtemp(prefix="sb-bench-node-"))
    state_dir = work / "cluster"
    log("    building: inv build --spec, inv image.build --spec, inv image.extender")
    _inv("build", "--spec", SPEC)  # every platform of the spec from today's sources: image.build packages what is built
    _inv("image.build", "--spec", SPEC)
    _inv("image.extender")
    binary = Path(json.loads(_inv("build", "--spec", SPEC, "--dist", str(work / "dist"), "--no-pull", "--json"))["binary"]["path"])
    try:
        log("    inv cluster.up --node")
        kubeconfig = _inv("cluster.up", "--node", "--state-dir", str(state_dir)).strip().splitlines()[-1]
        _inv("cluster.load", "--spec", SPEC, "--state-dir", str(state_dir))
        _inv("deploy", "--spec", SPEC, "--kubeconfig", kubeconfig, "--timeout", "300")
        results = measure(kobj.api_client(kubeconfig), kubeconfig, binary, work, pods, nodes, repeats, qps)
    finally:
        if state_dir.exists():
            log("    inv cluster.down")
            subprocess.run([sys.executable, "-m", "invoke", "cluster.down", "--state-dir", str(state_dir)], cwd=REPO,
                           capture_output=True, text=True, timeout=600)
        shutil.rmtree(work, ignore_errors=True)
    med = {v: statistics.median(r["pods_per_second"] for r in runs) for v, runs in results["runs"].items()}
    results["median_pods_per_second"] = med
    results["ratio_pod_to_host"] = round(med["pod"] / med["host"], 3) if med["host"] else None
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    results["cpus"] = os.cpu_count()
    return results


def markdown(results: dict) -> str:
    lines = [f"{results['pods']} pods bound to {results['nodes']} fake nodes beside one real node, median of "
             f"{results['repeats']} round(s); {results['cpus']} CPUs, load average {results['load_average_before']} before, "
             f"{results['load_average_after']} after; client QPS/burst {results['client_qps_burst']}:", "",
             "| variant | pods/s (median) | runs |", "| --- | --- | --- |"]
    for v, label in VARIANTS.items():
        runs = ", ".join(f"{r['pods_per_second']:.0f}" for r in results["runs"][v])
        lines.append(f"| {label} | {results['median_pods_per_second'][v]:.0f} | {runs} |")
    lines += ["", f"ratio pod / host: {results['ratio_pod_to_host']}"]
    return "\n".join(lines) + "\n"
