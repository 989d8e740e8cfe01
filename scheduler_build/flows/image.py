"""The image pipeline's conductor: build what dist/ lacks, package, load, push, sign, rebuild and compare.

Plain functions over the stages' typed requests and results. The task layer
(commands/image.py) turns flags and settings into a loaded `Plan` and a
`request_for(arch)` factory (commands._common.build_request, the one home of a
BuildRequest from settings) and calls these; bench/ calls them the same way.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from scheduler_build.build import pipeline as build_stage
from scheduler_build.image import assemble as image_stage
from scheduler_build.image import request as image_request
from scheduler_build.progress import phase
from scheduler_build.flows import publishers
from scheduler_build.inputs.publish import DaemonInputs
from scheduler_build.publish.multi import MultiPublisher, PublishedEach
from scheduler_build.publish.publisher import ImageArtifact
from scheduler_build.publish import verify as verify_stage

RequestFor = Callable[[str], build_stage.BuildRequest]  # arch -> the build of that platform


def build_missing(planned: image_request.Plan, request_for: RequestFor) -> None:
    """Build every platform dist/ lacks (with the spec's plugins, patches and suffix), visibly."""
    for plat, arch in planned.missing():
        with phase("image.binary", f"building {plat} (no binary under {planned.platform_dir(arch)}): "
                                   f"{planned.build_command(arch)}"):
            build_stage.run(request_for(arch))


def assemble(request: image_request.ImageRequest, host: str, to: MultiPublisher[ImageArtifact]
             ) -> image_stage.ImageResult:
    """Assemble (or reuse) the layout, handing each fresh platform image to the destinations that take it early
    (the daemon: loaded while its layer is compressed, daemon.Preloader)."""
    with to.assembling() as early:
        return image_stage.build(request, host, early=early)


def publish(result: image_stage.ImageResult, to: MultiPublisher[ImageArtifact]) -> PublishedEach:
    return to.publish(ImageArtifact(result.layout, result.info))


def build_and_load(request: image_request.ImageRequest, host: str) -> image_stage.ImageResult:
    """Assemble the layout and have the engine hold its images (bench/ times this: image.build's default)."""
    to = publishers.publishers([DaemonInputs()])
    result = assemble(request, host, to)
    publish(result, to)
    return result


def package(planned: image_request.Plan, request_for: RequestFor, host: str, to: MultiPublisher[ImageArtifact]
            ) -> tuple[image_request.ImageRequest, image_stage.ImageResult, PublishedEach]:
    """image.build's conductor: build the platforms dist/ lacks, package what it holds, publish it to its
    destinations (--to; the engine by default)."""
    build_missing(planned, request_for)
    request = image_request.prepare(planned)
    result = assemble(request, host, to)
    return request, result, publish(result, to)


def push(planned: image_request.Plan | None, layout: Path | None, request_for: RequestFor | None, host: str,
         to: MultiPublisher[ImageArtifact]) -> PublishedEach:
    """image.push's conductor: the given layout (an extracted archive, or dist/'s with --no-build), else
    build what dist/ lacks and assemble the layout first (no engine unless --to names the daemon: a current
    layout is reused as it is); then publish it to each destination in order (flows/publishers)."""
    if layout is None:
        assert planned is not None and request_for is not None
        build_missing(planned, request_for)
        return publish(assemble(image_request.prepare(planned), host, to), to)
    return to.publish(ImageArtifact.of_layout(layout))


def rebuild_and_compare(report: verify_stage.Report, planned: image_request.Plan, request_for: RequestFor,
                        image_epoch: int, host: str) -> None:
    """Rebuild every verified platform image from the recorded inputs and compare digests: the binaries with
    the binaries' recorded epoch (in `planned` and `request_for`), the images with the images' own."""
    build_missing(planned, request_for)
    opts = dataclasses.replace(planned.opts, source_date_epoch=str(image_epoch))
    result = image_stage.build(image_request.prepare(dataclasses.replace(planned, opts=opts)), host)
    for image in result.platforms:
        expected = report.images.get(image.platform, "")
        report.add("rebuild", expected or image.platform, image.manifest_digest == expected,
                   "" if image.manifest_digest == expected else f"rebuilt as {image.manifest_digest}")
