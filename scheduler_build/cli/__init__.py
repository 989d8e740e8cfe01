"""The `scheduler-build` program: `app` puts it together, `entry` is the console script."""
