"""`image`: where the scheduler image is pushed and how the cluster pulls it."""

from __future__ import annotations

from typing import Any

from scheduler_build.spec.fields import Fields, as_text
from scheduler_build.spec.formats import IMAGE_REPO, IMAGE_TAG, PULL_POLICIES
from scheduler_build.spec.model import Image, default_repository


def check_image(f: Fields, value: Any, name: str) -> Image:
    default = Image(repository=default_repository(name))
    if value is None or f.mapping("image", value, ("repository", "tag", "pullPolicy")) is None:
        return default
    repo = f.optional(value, "repository", "image.repository", lambda p, v: f.string(
        p, v, IMAGE_REPO, "an image repository such as registry.example.com/acme/kube-scheduler (no tag)"),
        default=default.repository)
    tag = f.optional(value, "tag", "image.tag", lambda p, v: f.string(p, as_text(v), IMAGE_TAG, "an image tag"),
                     default="")
    policy = f.optional(value, "pullPolicy", "image.pullPolicy", lambda p, v: f.enum(p, v, PULL_POLICIES),
                        default="IfNotPresent")
    return Image(repository=repo, tag=tag, pull_policy=policy)
