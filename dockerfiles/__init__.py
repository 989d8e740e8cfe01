"""Dockerfiles, shipped as scheduler_build.dockerfiles (see scheduler_build/resources.py)."""
