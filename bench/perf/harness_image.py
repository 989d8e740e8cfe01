"""The harness image of `bench.perf --on`: scheduler_perf's test binary, etcd, the workloads and the plan.

FROM scratch and non-root (65532), assembled as `image.build` assembles the scheduler's image
(scheduler_build/image/): one deterministic layer (layer.write_compressed_layer: sorted entries, fixed
owners and mtimes), a canonical OCI config dated SOURCE_DATE_EPOCH 0, an OCI image layout, pushed by
publish/registry.py (the layout's exact bytes, verified by digest) and run by digest. Its file system:

- the root file system image.build gives its binary (layer.rootfs_entries: /etc/passwd, CA bundle, /tmp)
  with the compiled harness as /usr/local/bin/perf.test and etcd beside it (the harness finds it on PATH);
- /perf-shard: the runner (runner/main.go, compiled here with CGO off, cached by its source's hash);
- /perf/plan.json and /perf/cells/...: every shard's planned cells and their configuration files (shard_plan);
- /k8s/ws/k8s.io/kubernetes@<version>/: upstream's scheduler_perf YAML (misc/ is the harness's working
  directory) and the test API server's certificate fixtures, where TEST_SRCDIR/TEST_WORKSPACE point
  (run.source_root's route for a -trimpath binary).
Equal inputs give the same digest, so a second run pushes nothing new.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.perf import harness, job, shard_plan
from scheduler_build.errors import UserError
from scheduler_build.image import layer, oci
from scheduler_build.progress import log, phase
from scheduler_build.publish import distribution, registry

RUNNER_SOURCE = Path(__file__).resolve().parent / "runner"
FIXTURES = "cmd/kube-apiserver/app/testing/testdata"  # the test API server's serving certificates
EPOCH = 0  # the image's date: its content, not when it was made, names it
TAG = "bench-perf"


@dataclass(frozen=True)
class Built:
    layout: Path
    index_digest: str
    manifest_digest: str


def runner_binary(cache_dir: Path, go: str = "go") -> Path:
    """The runner, compiled once per source (static: the image has no libc)."""
    source = (RUNNER_SOURCE / "main.go").read_bytes() + (RUNNER_SOURCE / "go.mod").read_bytes()
    out = Path(cache_dir) / "perf-runner" / hashlib.sha256(source).hexdigest()[:16] / "perf-shard"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".perf-shard-{os.getpid()}")
    env = dict(os.environ, CGO_ENABLED="0", GOOS="linux", GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    with phase("runner", "go build of the harness image's entrypoint (standard library only)"):
        done = subprocess.run([go, "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", str(tmp), "."],
                              cwd=RUNNER_SOURCE, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"go build of {RUNNER_SOURCE} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}",
                        "is Go on PATH (/usr/local/go/bin)?")
    os.replace(tmp, out)
    return out


def _parents(paths: list[str]) -> list[str]:
    out = set()
    for p in paths:
        parts = p.split("/")[:-1]
        out.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    return sorted(out)


def entries(h: harness.Harness, etcd_bin: Path, runner: Path, body: dict, files: dict[str, bytes]) -> list[layer.Entry]:
    """Every entry of the image's one layer (pure but for listing upstream's YAML files)."""
    found: list[layer.Entry] = list(layer.rootfs_entries(h.binary, "perf.test"))
    ours: dict[str, bytes | Path] = {f"{layer.BIN_DIR}/etcd": etcd_bin, job.RUNNER.lstrip("/"): runner,
                                     "perf/plan.json": json.dumps(body, indent=1, sort_keys=True).encode()}
    ours.update({path.lstrip("/"): data for path, data in files.items()})
    root = shard_plan.module_root(h.kubernetes).lstrip("/")
    perf_dir = h.module_dir / harness.UPSTREAM_DIR
    for source in sorted(perf_dir.rglob("*.yaml")) + sorted((h.module_dir / FIXTURES).glob("*")):
        if source.is_file():
            ours[f"{root}/{source.relative_to(h.module_dir)}"] = source
    taken = {e[0] for e in found}
    found += [(d, 0o755, 0, 0, None) for d in _parents(list(ours)) if d not in taken]
    executable = {f"{layer.BIN_DIR}/etcd", job.RUNNER.lstrip("/")}
    found += [(p, 0o755 if p in executable else 0o644, 0, 0, c) for p, c in sorted(ours.items())]
    return found


def _config(arch: str, diff_id: str) -> bytes:
    return oci.canonical({
        "architecture": arch, "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": {"User": f"{layer.UID}:{layer.GID}", "Entrypoint": [job.RUNNER], "WorkingDir": "/",
                   "Env": ["PATH=/usr/local/bin", "TMPDIR=/tmp"],
                   "Labels": {"org.opencontainers.image.title": "scheduler-build bench.perf harness"}},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "scheduler-build bench.perf --on"}],
    })


def build(found: list[layer.Entry], arch: str, cache_dir: Path) -> Built:
    """The OCI layout of the image (under <cache>/perf-image/<manifest digest>/; reused when there)."""
    base = Path(cache_dir) / "perf-image"
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=base))
    try:
        lay = oci.Layout(staging)
        with phase("image", f"harness image layer ({len(found)} entries)"):
            diff_id, digest, size = layer.write_compressed_layer(staging / ".layer", found, EPOCH)
        lay.adopt(staging / ".layer", digest)
        config = _config(arch, diff_id)
        manifest = oci.canonical({"schemaVersion": 2, "mediaType": oci.MANIFEST,
                                  "config": {"mediaType": oci.CONFIG, "digest": lay.put(config), "size": len(config)},
                                  "layers": [{"mediaType": oci.LAYER_GZIP, "digest": digest, "size": size}]})
        manifest_digest = lay.put(manifest)
        index = oci.canonical({"schemaVersion": 2, "mediaType": oci.INDEX, "manifests": [
            {"mediaType": oci.MANIFEST, "digest": manifest_digest, "size": len(manifest),
             "platform": oci.platform_dict(arch)}]})
        index_digest = lay.put(index)
        lay.write_index([{"mediaType": oci.INDEX, "digest": index_digest, "size": len(index),
                          "annotations": {oci.REF_NAME: TAG}}])
        final = base / manifest_digest.split(":", 1)[1][:32]
        if not final.is_dir():
            os.replace(staging, final)  # whole or not at all
        log(f"    harness image {manifest_digest[:19]}, layer {size} bytes")
        return Built(final, index_digest, manifest_digest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def push(built: Built, client: distribution.Client) -> str:
    """Push the layout; the reference the Job runs (by digest)."""
    with phase("push", f"harness image to {client.target.name}"):
        registry.push(built.layout, client)
    return f"{client.target.name}@{built.index_digest}"
