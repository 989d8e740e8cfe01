"""The Helm chart as an OCI artifact next to the image (`config.chart --push`), signed like the image.

`package` makes the chart archive Helm's `helm package` would, but deterministic: entries
sorted under `<name>/`, owner root, mode 0644, every time stamp SOURCE_DATE_EPOCH, gzip
without a name or time. `push` uploads it the way `helm push` does (Helm's OCI media
types: the Chart.yaml metadata as the config, the archive as the one layer, tagged with
the chart version) through the distribution client image.push uses, to `<registry>/<name>`
(what `helm pull oci://<registry>/<name> --version V` reads), and reads the manifest
back by digest. `cosign sign` then signs that digest as it signs the image.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from scheduler_build.image import oci
from scheduler_build.progress import log, phase
from scheduler_build.publish import distribution
from scheduler_build.errors import UserError

CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json"
CHART_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


@dataclass
class PushedChart:
    reference: str  # repo@sha256:...
    tag: str
    digest: str

    @property
    def references(self) -> list[str]:  # publish/publisher.Published
        return [self.reference]

    def as_dict(self) -> dict:
        return as_dict(self)


def package(files: dict[str, str], epoch: int) -> bytes:
    """The chart archive (.tgz) of a chart's files (path inside the chart -> content)."""
    name = yaml.safe_load(files["Chart.yaml"])["name"]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            data = files[path].encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size, info.mtime, info.mode, info.uname, info.gname = len(data), epoch, 0o644, "root", "root"
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def manifest(chart_yaml: str, archive: bytes) -> tuple[bytes, bytes]:
    """(config, manifest) of the chart artifact, canonical JSON."""
    config = oci.canonical({k: v for k, v in yaml.safe_load(chart_yaml).items() if v not in (None, "")})
    body = {"schemaVersion": 2, "mediaType": oci.MANIFEST,
            "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": oci.digest_of(config), "size": len(config)},
            "layers": [{"mediaType": CHART_MEDIA_TYPE, "digest": oci.digest_of(archive), "size": len(archive)}]}
    return config, oci.canonical(body)


def push(files: dict[str, str], client: distribution.Client, epoch: int) -> PushedChart:
    """Upload the chart to client.target (<registry>/<chart name>) tagged with its version; verify by digest."""
    meta = yaml.safe_load(files["Chart.yaml"])
    archive = package(files, epoch)
    config, body = manifest(files["Chart.yaml"], archive)
    tag = str(meta["version"]).replace("+", "_")  # Helm's own mapping: '+' is not allowed in a tag
    client.connect()
    with tempfile.TemporaryDirectory(prefix="scheduler-build-chart-") as tmp:
        for data in (config, archive):
            path = Path(tmp) / oci.digest_of(data).split(":")[1]
            path.write_bytes(data)
            client.push_blob(path, oci.digest_of(data))
    client.put_manifest(tag, body, oci.MANIFEST)
    back, _ = client.get_manifest(tag, [oci.MANIFEST])
    digest = oci.digest_of(body)
    if oci.digest_of(back) != digest:
        raise UserError(f"{client.target.name}:{tag} reads back as {oci.digest_of(back)}, expected {digest}")
    log(f"    pushed chart {client.target.name}:{tag} ({len(archive)} bytes) as {digest}")
    return PushedChart(f"{client.target.name}@{digest}", tag, digest)


def chart_target(registry: str, chart_name: str) -> distribution.Target:
    """Where Helm looks for `oci://<registry>/<chart name>`."""
    return distribution.parse_target(f"{registry.rstrip('/')}/{chart_name}")


def as_dict(pushed: PushedChart) -> dict:
    return {"reference": pushed.reference, "tag": pushed.tag, "digest": pushed.digest}


def summary(pushed: PushedChart) -> str:
    return json.dumps(as_dict(pushed), sort_keys=True)


ChartSigner = Callable[[list[str], distribution.Client], list[str]]  # (references, client) -> what was signed


@dataclass(frozen=True)
class ChartPublisher:
    """The chart destination: push the chart's files as one OCI artifact, then sign it when asked."""

    client: distribution.Client
    epoch: int  # the chart archive's member dates
    sign: ChartSigner | None  # None: push only

    def publish(self, artifact: dict[str, str]) -> PushedChart:
        with phase("chart.push", self.client.target.name):
            pushed = push(artifact, self.client, self.epoch)
        if self.sign is not None:
            with phase("chart.sign", self.client.target.name):
                self.sign([pushed.reference], self.client)
        return pushed
