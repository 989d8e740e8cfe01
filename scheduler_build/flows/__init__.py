"""Flows: the conductors that chain stages for a task (no invoke here; commands/ and bench/ call them)."""
