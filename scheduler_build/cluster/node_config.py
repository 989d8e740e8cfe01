"""The node components' configuration files and command lines (pure: no process is started here).

Each choice handles this machine kind rather than hiding it: cgroup v1 is
accepted (`failCgroupV1: false`), there is no systemd (`cgroupDriver: cgroupfs`),
the kubelet serves on the node's dummy address and 127.0.0.1 only, and the
paths the kubelet would put under /usr/libexec or /var/log/pods go into the
state directory instead.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from scheduler_build.atomic import write_atomic
from scheduler_build.cluster import network
from scheduler_build.cluster import pki as cluster_pki
from scheduler_build.cluster.pki import SERVICE_CIDR

NODE_NAME = "scheduler-build-node"
CGROUP_ROOT = "scheduler-build"  # /sys/fs/cgroup/<hierarchy>/scheduler-build, removed by `down`
KUBELET_PORT = 10350  # on the node address only


def write_yaml(path: Path, data: dict, mode: int = 0o644) -> Path:
    write_atomic(path, yaml.safe_dump(data, sort_keys=True), mode)
    return path


def component_kubeconfig(state_dir: Path, server: str, role: str, user: str) -> Path:
    pki = state_dir / "pki"
    config = cluster_pki.kubeconfig(server, (pki / "ca.crt").read_bytes(), user,
                                    (pki / f"{role}.crt").read_bytes(), (pki / f"{role}.key").read_bytes())
    return cluster_pki.write_kubeconfig(state_dir / "node" / f"{role}.kubeconfig", config)


def kubelet_config(state_dir: Path, containerd_sock: Path, healthz_port: int) -> dict:
    pki, node = state_dir / "pki", state_dir / "node"
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # 1.35+ refuses cgroup v1 unless told
        "cgroupDriver": "cgroupfs",  # no systemd on this machine kind
        "cgroupRoot": f"/{CGROUP_ROOT}",
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{containerd_sock}",
        "imageServiceEndpoint": f"unix://{containerd_sock}",
        "podLogsDir": str(node / "pod-logs"),
        "volumePluginDir": str(node / "volume-plugins"),
        "address": network.NODE_IP, "port": KUBELET_PORT, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": healthz_port,
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(pki / "ca.crt")}},
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": str(pki / "kubelet-serving.crt"), "tlsPrivateKeyFile": str(pki / "kubelet-serving.key"),
        "clusterDomain": "cluster.local",
        "clusterDNS": [network.NODE_IP],  # CoreDNS (cluster/dns.py) on the node address
        "resolvConf": "/etc/resolv.conf",
        # Images are loaded (cluster.load) or pulled from the user's own registry (--registry):
        # never garbage-collect them.
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99, "imageMinimumGCAge": "87600h",
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%",
                         "imagefs.available": "1%"},
        "maxPods": 30, "serializeImagePulls": False, "rotateCertificates": False, "serverTLSBootstrap": False,
        # KEP-2535 (beta in 1.35): once the kubelet has pulled an image, another name for the same
        # image (e.g. `cluster.load` of what was pulled from --registry) must be re-verified by a
        # pull, which for registry.example.com/... can never succeed here: ImagePullBackOff on an
        # image the node holds. This is a one-operator test node whose images arrive by
        # `cluster.load`, like kind's: images present may be used, as before 1.33.
        "imagePullCredentialsVerificationPolicy": "NeverVerify",
    }


def kubelet_argv(binary: str, state_dir: Path, config: Path, kubeconfig: Path) -> list[str]:
    node = state_dir / "node"
    return [binary, f"--config={config}", f"--kubeconfig={kubeconfig}", f"--root-dir={node / 'kubelet'}",
            f"--hostname-override={NODE_NAME}", f"--node-ip={network.NODE_IP}", f"--cert-dir={node / 'kubelet-pki'}",
            "--v=1"]


def kube_proxy_config(kubeconfig: Path, healthz_port: int, metrics_port: int) -> dict:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "mode": "iptables", "clusterCIDR": network.POD_CIDR, "hostnameOverride": NODE_NAME,
        "bindAddress": "127.0.0.1",
        "healthzBindAddress": f"127.0.0.1:{healthz_port}", "metricsBindAddress": f"127.0.0.1:{metrics_port}",
        # NodePorts only on the node's own address, never on the machine's interfaces.
        "nodePortAddresses": [f"{network.NODE_IP}/32"],
        # no route_localnet sysctl; 0 = leave the conntrack sysctls alone
        "iptables": {"localhostNodePorts": False, "masqueradeAll": False},
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
    }


def controller_manager_argv(binary: str, state_dir: Path, kubeconfig: Path, port: int) -> list[str]:
    pki = state_dir / "pki"
    return [
        binary, f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
        f"--cluster-signing-cert-file={pki / 'ca.crt'}", f"--cluster-signing-key-file={pki / 'ca.key'}",
        "--use-service-account-credentials=true", "--controllers=*", "--leader-elect=false",
        "--bind-address=127.0.0.1", f"--secure-port={port}", f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--cert-dir={state_dir / 'node' / 'kcm-certs'}", "--v=1",
    ]


def default_scheduler_argv(binary: str, kubeconfig: str, port: int) -> list[str]:
    return [binary, f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}", "--leader-elect=false", "--bind-address=127.0.0.1",
            f"--secure-port={port}", "--v=1"]
