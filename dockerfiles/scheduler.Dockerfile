# The scheduler image: a static kube-scheduler on scratch, non-root, with CA certificates.
#
# `inv image.build` does not run this file: Docker 20.10's classic builder stamps
# `created` with the wall clock, so its image IDs never repeat. It assembles the
# identical image itself (scheduler_build/image/assemble.py: one deterministic layer, the
# config below, SOURCE_DATE_EPOCH as every timestamp) and `docker load`s it.
# tests/integration/test_image.py builds this file through the engine and checks
# that both give the same file system, user, entrypoint and environment.
#
# Context: rootfs/ holds
#   etc/passwd, etc/group             root and nonroot (65532:65532)
#   etc/ssl/certs/ca-certificates.crt Debian's CA bundle: TLS to extenders and API servers verifies
#   tmp/                              1777
#   usr/local/bin/kube-scheduler      the static binary from `inv build`
# Labels (org.opencontainers.image.*, org.scheduler-build.*) are passed at build time.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kube-scheduler"]
