#!/usr/bin/env bash
# Prepare a machine for scheduler-build: the Python package with its test extra,
# a running Docker engine, Go, and the Debian packages the tests use.
# Idempotent, and quiet when everything is already present.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup: $*" >&2; }

# What the toolkit and its tests need, by capability: each Debian package is
# installed only when its capability is absent, so a runner that already has it
# another way keeps it. GitHub's Ubuntu images ship Docker CE with containerd.io
# (which provides containerd and runc): Debian's docker.io, containerd and runc
# would conflict with them and replace the engine the runner uses.
#   docker.io        the engine (20.10, API 1.41)           present: `docker info` answers, or dockerd is installed
#   busybox-static   the root filesystem of the bootstrapped golang builder
#   ca-certificates  CA bundle copied into images
#   docker-registry  the distribution registry for push tests
#   etcd-server      the control plane's store for e2e tests
#   qemu-user-static runs arm64 binaries to check their version
#   debootstrap      the Python runtime base of the extender image
#   containerd       the engine's runtime (the node's containerd 2 is built from the Go module proxy)
#   runc, containernetworking-plugins, iptables, conntrack, iproute2
#                    the real node of `inv cluster.up --node` (runc under its containerd, CNI bridge, kube-proxy)
# One line per package: NAME|shell test that succeeds when the capability is there.
CAPABILITIES='
docker.io|docker info >/dev/null 2>&1 || have dockerd
busybox-static|installed busybox-static
ca-certificates|test -s /etc/ssl/certs/ca-certificates.crt
docker-registry|have docker-registry
etcd-server|have etcd
qemu-user-static|have qemu-aarch64-static
debootstrap|have debootstrap || test -x /usr/sbin/debootstrap
containerd|have containerd || installed containerd.io
runc|have runc || installed containerd.io
containernetworking-plugins|test -x /usr/lib/cni/bridge
iptables|have iptables
conntrack|have conntrack
iproute2|have ip
graphviz|have dot
'

export PATH="/usr/local/go/bin:$PATH"

have() { command -v "$1" >/dev/null 2>&1; }
installed() { have dpkg-query && dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
while IFS='|' read -r pkg probe; do
  [ -n "$pkg" ] || continue
  installed "$pkg" || eval "$probe" || missing+=("$pkg")
done <<<"$CAPABILITIES"
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Debian starts the registry and etcd as services; the tests start their own on
    # free ports, so stop the packaged ones where an init system runs them.
    for svc in docker-registry etcd; do
      service "$svc" stop >/dev/null 2>&1 || true
    done
  else
    say "missing Debian packages: ${missing[*]} (run as root on Debian, or install them)"
  fi
fi

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null 2>&1; then
    say "starting dockerd"
    nohup dockerd >/var/log/dockerd.log 2>&1 &
    for _ in $(seq 1 60); do
      docker info >/dev/null 2>&1 && break
      sleep 1
    done
    docker info >/dev/null 2>&1 || { say "dockerd did not start; see /var/log/dockerd.log"; exit 1; }
  else
    say "no Docker engine answers and it cannot be started here (need root and dockerd)"
    exit 1
  fi
fi

if ! command -v go >/dev/null 2>&1; then
  say "Go is missing: install Go 1.26+ at /usr/local/go"
  exit 1
fi

# Reinstall when the package is missing, installed from another checkout (an
# editable install elsewhere would test that code, not this one), or when any
# declared dependency, test extra included, is absent.
if ! (cd / && python3 - "$OLDPWD") >/dev/null 2>&1 <<'PY' || ! command -v inv >/dev/null 2>&1
import importlib.metadata as md, os, sys
import scheduler_build
assert os.path.realpath(scheduler_build.__file__).startswith(os.path.realpath(sys.argv[1]) + os.sep)
from packaging.requirements import Requirement  # pytest's own dependency; missing means reinstall anyway
for req in map(Requirement, md.requires("scheduler-build") or []):
    # a requirement for another Python (tomli on 3.10) is not missing here
    if req.marker is None or req.marker.evaluate({"extra": "test"}):
        md.version(req.name)
PY
then
  say "installing the scheduler-build package with its test extra"
  python3 -m pip install -q --disable-pip-version-check -e '.[test]' >/dev/null 2>&1 \
    || python3 -m pip install --disable-pip-version-check -e '.[test]'
fi

# kubectl: `kubectl kustomize` and `kubectl apply -k` in the tests. Built like the other components
# (our hermetic build of k8s.io/kubernetes/cmd/kubectl, cached by its inputs) when the machine has none;
# Debian ships no kubectl.
if ! have kubectl; then
  if [ "$(id -u)" = 0 ]; then
    say "building kubectl (inv build --no-spec --component kubectl)"
    kubectl_bin="$(inv build --no-spec --component kubectl --no-pull --dist "${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-build/tools" --json \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["binary"]["path"])')"
    ln -sf "$kubectl_bin" /usr/local/bin/kubectl
  else
    say "kubectl is missing: run this as root to build it, or install kubectl"
    exit 1
  fi
fi
