"""Jinja templates, shipped as scheduler_build.templates (see scheduler_build/resources.py)."""
