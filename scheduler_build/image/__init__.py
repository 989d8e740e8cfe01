"""image: reproducible FROM-scratch OCI images of built binaries, their SBOMs, and the reference extender image."""
