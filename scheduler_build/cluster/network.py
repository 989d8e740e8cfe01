"""The node's network: its own addresses, never the machine's external interface.

`cluster.up --node` creates an interface of its own holding NODE_IP (a bridge with
no ports: this machine kind's kernel has no `dummy` link type): the API server,
the kubelet and NodePorts serve there (and on 127.0.0.1), so nothing the cluster
starts listens on the machine's own addresses. Pods live on a CNI bridge in
POD_CIDR; Services in SERVICE_CIDR. Before anything starts, every range is
checked against the machine's addresses and routes (Docker's bridge included).

Teardown removes exactly what the node added: the two links and the iptables
chains (v4 and v6) named KUBE-*/CNI-* that did not exist before `up`, with every
rule jumping to them; the machine's other rules (Docker's) are left alone.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
import subprocess

from scheduler_build.cluster.pki import SERVICE_CIDR
from scheduler_build.errors import UserError

DUMMY = "sbnode0"  # holds NODE_IP: a port-less bridge, local traffic only
BRIDGE = "sbbr0"  # the CNI bridge (created by the bridge plugin on the first pod)
NODE_IP = "10.250.0.1"
NODE_CIDR = "10.250.0.0/24"
POD_CIDR = "10.244.0.0/24"
POD_GATEWAY = "10.244.0.1"
OUR_LINKS = (DUMMY, BRIDGE)
CHAIN_PREFIXES = ("KUBE-", "CNI-")
TABLES = ("filter", "nat", "mangle")
IPTABLES = ("iptables", "ip6tables")


def _run(argv: list[str], check: bool = True) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise UserError(f"{argv[0]} is not installed", "apt-get install -y iproute2 iptables") from None
    if check and out.returncode != 0:
        raise UserError(f"`{' '.join(argv)}` failed: {out.stderr.strip()}", "run `inv doctor --node`")
    return out.stdout


def machine_networks() -> list[tuple[str, ipaddress.IPv4Network]]:
    """Every IPv4 network on the machine's links and routes, except ours and loopback."""
    found = []
    for entry in json.loads(_run(["ip", "-j", "-4", "addr"]) or "[]"):
        if entry.get("ifname") in OUR_LINKS or entry.get("ifname") == "lo":
            continue
        for addr in entry.get("addr_info", []):
            net = ipaddress.ip_network(f"{addr['local']}/{addr['prefixlen']}", strict=False)
            found.append((f"address of {entry['ifname']}", net))
    for route in json.loads(_run(["ip", "-j", "-4", "route"]) or "[]"):
        dst = route.get("dst", "")
        if dst and dst != "default" and route.get("dev") not in OUR_LINKS:
            net = ipaddress.ip_network(dst if "/" in dst else f"{dst}/32", strict=False)
            found.append((f"route via {route.get('dev', '?')}", net))
    return found


def check_ranges(networks: list[tuple[str, ipaddress.IPv4Network]] | None = None) -> None:
    """Pod, service and node ranges must not overlap the machine's or Docker's networks."""
    networks = machine_networks() if networks is None else networks
    for what, ours in (("pod range", POD_CIDR), ("service range", SERVICE_CIDR), ("node address range", NODE_CIDR)):
        mine = ipaddress.ip_network(ours)
        for where, theirs in networks:
            if mine.overlaps(theirs):
                raise UserError(f"the node's {what} {ours} overlaps the machine's {theirs} ({where})",
                                "free that range on this machine; the node's ranges are fixed in cluster/network.py")


def link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


def create_dummy() -> None:
    """The node's own interface: NODE_IP/32 on a port-less bridge (no route leaves the machine)."""
    if link_exists(DUMMY):
        raise UserError(f"interface {DUMMY} already exists (another node, or one that crashed, left it)",
                        f"run `inv cluster.down --state-dir DIR` for that node; if its state dir is gone, "
                        f"`ip link del {DUMMY}`")
    _run(["ip", "link", "add", DUMMY, "type", "bridge"])
    _run(["ip", "addr", "add", f"{NODE_IP}/32", "dev", DUMMY])
    _run(["ip", "link", "set", DUMMY, "up"])


def delete_links() -> list[str]:
    removed = []
    for name in OUR_LINKS:
        if link_exists(name):
            _run(["ip", "link", "del", name], check=False)
            removed.append(name)
    return removed


def chains(tool: str) -> dict[str, set[str]]:
    """The KUBE-*/CNI-* chains per table, as `<tool>-save` lists them."""
    found: dict[str, set[str]] = {}
    for table in TABLES:
        out = _run([f"{tool}-save", "-t", table], check=False)
        found[table] = {m.group(1) for m in re.finditer(r"^:(\S+)", out, re.M) if m.group(1).startswith(CHAIN_PREFIXES)}
    return found


def snapshot() -> dict[str, dict[str, list[str]]]:
    """The KUBE-*/CNI-* chains that exist before `up` (kept by `down`)."""
    return {tool: {t: sorted(c) for t, c in chains(tool).items()} for tool in IPTABLES}


def remove_chains(before: dict[str, dict[str, list[str]]]) -> list[str]:
    """Delete every KUBE-*/CNI-* chain that `before` did not list, and every rule jumping to one."""
    removed = []
    for tool in IPTABLES:
        for table, now in chains(tool).items():
            ours = now - set(before.get(tool, {}).get(table, []))
            if not ours:
                continue
            rules = _run([f"{tool}-save", "-t", table], check=False).splitlines()
            for rule in rules:
                parts = shlex.split(rule)
                if rule.startswith("-A ") and "-j" in parts and parts[parts.index("-j") + 1] in ours \
                        and parts[1] not in ours:
                    _run([tool, "-t", table, "-D", *parts[1:]], check=False)
            for chain in ours:
                _run([tool, "-t", table, "-F", chain], check=False)
            for chain in ours:
                _run([tool, "-t", table, "-X", chain], check=False)
                removed.append(f"{tool}/{table}/{chain}")
    return removed
