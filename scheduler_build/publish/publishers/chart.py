"""Push a Helm chart as an OCI artifact (<registry>/<chart name>:<version>), then sign it when asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scheduler_build.progress import phase
from scheduler_build.publish import chart as chart_stage
from scheduler_build.publish import registry as registry_stage

ChartSigner = Callable[[list[str], registry_stage.Client], list[str]]  # (references, client) -> what was signed


@dataclass(frozen=True)
class ChartPublisher:
    client: registry_stage.Client
    epoch: int  # the chart archive's member dates
    sign: ChartSigner | None  # None: push only

    def publish(self, artifact: dict[str, str]) -> chart_stage.PushedChart:
        with phase("chart.push", self.client.target.name):
            pushed = chart_stage.push(artifact, self.client, self.epoch)
        if self.sign is not None:
            with phase("chart.sign", self.client.target.name):
                self.sign([pushed.reference], self.client)
        return pushed
