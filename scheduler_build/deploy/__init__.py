"""deploy: server-side apply of the rendered scheduler (`apply`) and its extender TLS Secrets (`tls`)."""
