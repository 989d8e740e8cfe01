"""dev: `dev.run`'s loop: what to watch, change detection, the cycle report."""
