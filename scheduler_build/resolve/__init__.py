"""resolve: a requested Kubernetes version → an exact release, its Go version and staging replaces (Go proxy, go.mod)."""
