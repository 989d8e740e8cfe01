"""Certificate rotation on the real node (tests/node/test_node.py, after the example is deployed):
`inv deploy --rotate-certs` while pods naming our scheduler keep being scheduled through the extender.
Apart from scenarios.py (whose helpers it uses) to keep each module under 400 lines."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.node.scenarios import (EXTENDER, FAULTS, NS, ROOT, SCHEDULER, _reporter, apis, assert_each_pod_bound_once,
                                  ensure_namespace, pause_pod, scheduler_pods, wait)

ROTATE_NS = "node-rotate"
SPEC = "examples/underlay/scheduler.yaml"


def _secrets(core) -> dict[str, bytes]:
    """The public parts of the three extender Secrets: name/key -> PEM bytes."""
    import base64

    return {suffix: base64.b64decode(core.read_namespaced_secret(f"{EXTENDER}-{suffix}", NS).data[key])
            for suffix, key in (("tls-ca", "ca.crt"), ("tls-serving", "tls.crt"), ("tls-client", "tls.crt"))}


def _ca_fingerprints(bundle: bytes) -> list[str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    from scheduler_build.config import extender_tls

    return [x509.load_pem_x509_certificate(pem).fingerprint(hashes.SHA256()).hex()
            for pem in extender_tls.split_bundle(bundle)]


def _rolled_out(apps, name: str) -> bool:
    dep = apps.read_namespaced_deployment(name, NS)
    want, status = dep.spec.replicas, dep.status
    return ((status.observed_generation or 0) >= dep.metadata.generation and (status.available_replicas or 0) == want
            and (status.updated_replicas or 0) == want and (status.replicas or 0) == want
            and not status.terminating_replicas)


def _rotate_pods(core) -> dict:
    return {p.metadata.name: p for p in core.list_namespaced_pod(ROTATE_NS).items}


def _late(core) -> dict:
    """Rotation pods not bound and Running yet: name -> (node, phase, condition messages)."""
    return {n: (p.spec.node_name, p.status.phase, [c.message for c in p.status.conditions or [] if c.message])
            for n, p in _rotate_pods(core).items() if not (p.spec.node_name and p.status.phase == "Running")}


def _make_room(core) -> int:
    """How many pods the rotation may create while it runs, all of which must run: the node runs
    at most its allocatable pods (kubelet maxPods), so the fault scenarios' pods (done with by now)
    are deleted first, and room is kept for the 6 pods before and after and one surge pod per
    Deployment during each rolling update."""
    from kubernetes.client.rest import ApiException

    try:
        core.delete_namespace(FAULTS)
    except ApiException as exc:
        if exc.status != 404:
            raise
    wait(lambda: not core.list_namespaced_pod(FAULTS).items, timeout=240, what=f"the pods of {FAULTS} gone")
    node = core.read_node("scheduler-build-node")
    on_node = [p for p in core.list_pod_for_all_namespaces(field_selector="spec.nodeName=scheduler-build-node").items
               if p.status.phase not in ("Succeeded", "Failed")]
    room = min(40, int(node.status.allocatable["pods"]) - len(on_node) - 6 - 2)
    assert room >= 5, f"the node has room for {room} more pods: {[p.metadata.name for p in on_node]}"
    return room


def rotate_certs_while_scheduling(kubeconfig: str) -> None:
    """`inv deploy --rotate-certs` while pods naming our scheduler keep coming: the Secrets hold a new
    CA and new leaves, both Deployments are rolled out and Available, and every pod created before,
    during and after the rotation is bound (through the extender: its filter is not ignorable, so a
    failed TLS handshake would leave the pod Pending) and Running, each bound once."""
    apps, core, _ = apis(kubeconfig)
    old = _secrets(core)
    (old_ca,) = _ca_fingerprints(old["tls-ca"])
    room = _make_room(core)
    ensure_namespace(core, ROTATE_NS)
    for i in range(3):
        core.create_namespaced_pod(ROTATE_NS, pause_pod(f"before-{i}"))
    wait(lambda: len(_rotate_pods(core)) == 3 and not _late(core), what="3 pods Running before the rotation")
    rotation = subprocess.Popen([sys.executable, "-m", "invoke", "deploy", "--spec", SPEC, "--kubeconfig", kubeconfig,
                                 "--rotate-certs", "--timeout", "300"], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    during = 0
    try:
        while rotation.poll() is None and during < room:  # a pod every 3 s while the rotation runs
            core.create_namespaced_pod(ROTATE_NS, pause_pod(f"during-{during}"))
            during += 1
            time.sleep(3)
        _, stderr = rotation.communicate(timeout=900)
    finally:
        if rotation.poll() is None:
            rotation.kill()
    assert rotation.returncode == 0, stderr[-3000:]
    assert "rotation step 1/3" in stderr and "rotation step 3/3" in stderr, stderr[-3000:]
    assert during >= 5, f"only {during} pods were created while the rotation ran"
    for i in range(3):
        core.create_namespaced_pod(ROTATE_NS, pause_pod(f"after-{i}"))

    new = _secrets(core)
    new_cas = _ca_fingerprints(new["tls-ca"])
    assert len(new_cas) == 1 and new_cas[0] != old_ca, (old_ca, new_cas)
    assert new["tls-serving"] != old["tls-serving"] and new["tls-client"] != old["tls-client"]
    for name in (SCHEDULER, EXTENDER):
        assert _rolled_out(apps, name), f"Deployment {name} not rolled out and Available after the rotation"

    total = 6 + during
    try:
        wait(lambda: len(_rotate_pods(core)) == total and not _late(core), timeout=300,
             what=f"all {total} pods bound and Running")
    except AssertionError:
        raise AssertionError(f"not bound and Running: {_late(core)}") from None
    scheduled: dict[str, int] = {}
    for ev in core.list_namespaced_event(ROTATE_NS).items:
        if ev.reason == "Scheduled":
            assert _reporter(ev) == SCHEDULER, (ev.involved_object.name, _reporter(ev))
            scheduled[ev.involved_object.name] = scheduled.get(ev.involved_object.name, 0) + (ev.count or 1)
        assert "already assigned" not in (ev.message or ""), ev.message
    # A pod is never scheduled twice, and one created before or after the rotation has its Scheduled event.
    # A scheduler's events are sent after the binding, best effort: one replaced by the rotation right
    # after binding a pod created meanwhile may go before its event does (cold .ci/run, stop 35: during-5
    # bound and Running, no event), so a missing event is tolerated for those pods alone.
    assert all(count == 1 for count in scheduled.values()), scheduled
    missing = set(_rotate_pods(core)) - set(scheduled)
    assert all(name.startswith("during-") for name in missing), (sorted(missing), scheduled)
    assert_each_pod_bound_once(core, [p.metadata.name for p in scheduler_pods(core)])
    waits = sorted((c.last_transition_time - p.metadata.creation_timestamp).total_seconds()
                   for p in _rotate_pods(core).values() for c in p.status.conditions or [] if c.type == "PodScheduled")
    print(f"rotation: {during} pods created during it; creation-to-bound seconds: median "
          f"{waits[len(waits) // 2]:.0f}, max {waits[-1]:.0f} (2-core shared machine)")
    core.delete_namespace(ROTATE_NS)
