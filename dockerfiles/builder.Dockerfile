# The bootstrapped builder: the host's Go toolchain on a static busybox root
# filesystem, for sites where the official golang image cannot be pulled.
# Built by `inv builder.bootstrap` from a context that scheduler-build assembles.
FROM scratch
ARG GO_VERSION
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/usr/local/go/bin:/bin \
    GOROOT=/usr/local/go \
    GOTOOLCHAIN=local \
    GOLANG_VERSION=${GO_VERSION} \
    HOME=/root
WORKDIR /src
