# The image CI steps run in (Drone's docker runner, any CI that runs steps in containers),
# on a locally bootstrapped Debian base (never pulled). The steps reach the Docker engine
# through the host's socket, mounted at /var/run/docker.sock.
# Context (assembled by scheduler_build/image/ci_step.py):
#   rootfs.tar  debootstrap --variant=minbase --include=python3,ca-certificates,git bookworm, cached
#   go/         the host's Go toolchain (GOROOT)
#   ca-certificates.crt  the host's CA bundle
#   site/       scheduler-build's dependencies and test extra (pip install --target)
#   package/    scheduler-build itself (last: a code change rebuilds only this layer)
FROM scratch
ADD rootfs.tar /
COPY go/ /usr/local/go/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY site/ /opt/scheduler-build/
COPY package/ /opt/scheduler-build/
ENV PYTHONPATH=/opt/scheduler-build \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin
RUN printf '#!/bin/sh\nexec /usr/bin/python3 -m invoke "$@"\n' > /usr/local/bin/inv && chmod 755 /usr/local/bin/inv \
 && git config --system --add safe.directory '*' \
 && /usr/bin/python3 -c "import scheduler_build.commands, invoke, docker, yaml, jinja2, pytest" && go version
WORKDIR /drone/src
