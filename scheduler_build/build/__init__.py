"""build: workspace → plugins → patches → vendor → compile (in the builder, no network) → verify → build-info."""
