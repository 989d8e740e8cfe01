"""Go on the host: its environment, tools built from the module proxy, and which toolchain runs a build."""
