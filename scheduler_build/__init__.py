"""scheduler-build: build, configure, ship and prove custom Kubernetes schedulers."""

__version__ = "0.1.0"
