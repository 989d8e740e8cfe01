"""builder_image.select with the Go toolchain.py chose (unit: a stand-in engine that only answers inspect_image).

`--go` pins the builder's Go: an official image of another patch is passed over for the bootstrapped
image of exactly that Go. Without `--go`, an official image that satisfies the go line is used, as before.
A bootstrapped image is reused only when its label names the same toolchain (module and hash).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from scheduler_build.golang import toolchain
from scheduler_build.build import builder_image


@dataclass
class Image:
    id: str
    labels: dict = field(default_factory=dict)
    env: list = field(default_factory=list)

    @property
    def short_id(self) -> str:
        return self.id[:12]


class Engine:
    def __init__(self, images: dict[str, Image]):
        self.images = images

    def inspect_image(self, ref: str):
        return self.images.get(ref)

    def pull(self, ref: str):
        raise AssertionError(f"no pull expected, asked for {ref}")


PROXY = toolchain.Toolchain("1.27.3", Path("/cache/golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64"), "proxy",
                            "golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64", "h1:abc=")
OFFICIAL = Image("sha256:official", env=["GOLANG_VERSION=1.27.1"])


def bootstrapped(identity: str) -> Image:
    return Image("sha256:boot", labels={builder_image.GO_VERSION_LABEL: "1.27.3", builder_image.TOOLCHAIN_LABEL: identity})


def test_go_pins_the_builder_to_exactly_its_version():
    engine = Engine({"golang:1.27": OFFICIAL, "scheduler-build/golang:1.27.3": bootstrapped(PROXY.identity)})
    chosen = builder_image.select(engine, "1.27.0", pull=False, go=replace(PROXY, pinned=True))
    assert (chosen.image, chosen.go_version, chosen.source, chosen.identity) == (
        "scheduler-build/golang:1.27.3", "1.27.3", "bootstrap-cached", PROXY.identity)


def test_without_go_an_official_image_that_satisfies_the_go_line_is_used():
    engine = Engine({"golang:1.27": OFFICIAL, "scheduler-build/golang:1.27.3": bootstrapped(PROXY.identity)})
    chosen = builder_image.select(engine, "1.27.0", pull=False, go=PROXY)
    assert (chosen.image, chosen.go_version, chosen.source) == ("golang:1.27", "1.27.1", "official")


class Rebuilt(Exception):
    """The bootstrap went on to build a new image (stopped where it looks for busybox)."""


def test_a_bootstrapped_image_of_another_toolchain_is_not_reused(monkeypatch):
    def rebuild():
        raise Rebuilt

    monkeypatch.setattr(builder_image, "find_static_busybox", rebuild)
    engine = Engine({"scheduler-build/golang:1.27.3": bootstrapped("golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64 h1:other=")})
    with pytest.raises(Rebuilt):
        builder_image.select(engine, "1.27.0", pull=False, go=PROXY)
