"""`inv plugin.retarget`: carry a plugin module to another Kubernetes minor (go.mod, compile, API changes)."""
