"""Invoke entry point: composes the collections defined in scheduler_build.tasks."""

from scheduler_build.tasks import namespace

ns = namespace()
