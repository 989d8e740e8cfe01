"""Push an image layout to a registry (the index, each platform image, both SBOMs), then sign when asked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scheduler_build.progress import phase
from scheduler_build.publish import registry as registry_stage

Signer = Callable[[Path, registry_stage.Client], list[str]]  # (layout, client) -> what was signed


@dataclass(frozen=True)
class RegistryPublisher:
    client: registry_stage.Client
    sign: Signer | None  # None: push only

    def publish(self, artifact: Path) -> registry_stage.PushResult:
        target = self.client.target
        with phase("image.push", target.name):
            pushed = registry_stage.push(artifact, self.client)
        if self.sign is not None:
            with phase("image.sign", target.name):
                pushed.signed = self.sign(artifact, self.client)
        return pushed
