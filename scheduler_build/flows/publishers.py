"""The one factory of publishers (publish/publisher.py): a task's decided destinations in, their publisher out.

One registered case per inputs record (inputs/publish.py), so a conductor asks for "the publisher of these
destinations" (`publishers`: a publish/multi.MultiPublisher, in --to's order) and never builds a registry
client, a signer or an engine connection itself."""

from __future__ import annotations

from functools import singledispatch
from pathlib import Path
from typing import Any, Sequence

from scheduler_build.inputs.publish import (ArchiveInputs, ChartPushInputs, CosignInputs, DaemonInputs, PushInputs,
                                            RegistryInputs, SigningInputs)
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import distribution
from scheduler_build.publish import sign as sign_stage
from scheduler_build.publish.archive import ArchivePublisher
from scheduler_build.publish.chart import ChartPublisher, ChartSigner
from scheduler_build.publish.daemon import DaemonPublisher
from scheduler_build.publish.multi import MultiPublisher
from scheduler_build.publish.publisher import ImageArtifact, Publisher
from scheduler_build.publish.registry import RegistryPublisher, Signer


@singledispatch
def publisher(inputs: Any) -> Publisher:
    raise TypeError(f"no publisher for {type(inputs).__name__}")


@publisher.register
def _(inputs: PushInputs) -> RegistryPublisher:
    return RegistryPublisher(client(inputs.registry), _image_signer(inputs.signing))


@publisher.register
def _(inputs: ChartPushInputs) -> ChartPublisher:
    return ChartPublisher(client(inputs.registry), inputs.epoch, _chart_signer(inputs.signing))


@publisher.register
def _(inputs: ArchiveInputs) -> ArchivePublisher:
    return ArchivePublisher(inputs.path, inputs.cache_dir, inputs.replacing)


@publisher.register
def _(inputs: DaemonInputs) -> DaemonPublisher:
    return DaemonPublisher()


def publishers(destinations: Sequence[PushInputs | DaemonInputs | ArchiveInputs]) -> MultiPublisher[ImageArtifact]:
    """Every decided image destination's publisher, in order: one artifact goes to each (publish/multi.py)."""
    return MultiPublisher([(decided.to, publisher(decided)) for decided in destinations])


def client(access: RegistryInputs) -> distribution.Client:
    """A registry client of decided values (image.verify makes its read-only one from the same)."""
    return distribution.Client(target=access.target, creds=access.creds, ca_cert=access.ca_cert,
                                 insecure=access.insecure, retries=access.retries, backoff=access.backoff)


def cosign(decided: CosignInputs) -> cosign_tool.Cosign:
    """The pinned cosign (built on first use) with the decided password and environment."""
    return cosign_tool.Cosign(cosign_tool.binary(decided.cache_dir), password=decided.password,
                              inherited=decided.environment)


def _image_signer(signing: SigningInputs | None) -> Signer | None:
    """Sign the index and images and attest their provenance (cosign is built on first use, when it signs)."""
    if signing is None:
        return None
    return lambda layout, registry: sign_stage.sign_pushed(cosign(signing.cosign), signing.key_ref, Path(layout), registry)


def _chart_signer(signing: SigningInputs | None) -> ChartSigner | None:
    if signing is None:
        return None
    return lambda references, registry: sign_stage.sign_references(cosign(signing.cosign), signing.key_ref, references, registry)
