# The reference extender on a locally bootstrapped Debian + python3 base (never pulled).
# Context (assembled by scheduler_build/image/extender.py):
#   rootfs.tar  debootstrap --variant=minbase --include=python3,ca-certificates bookworm, cached
#   app/        scheduler_build.extender (+ scheduler_build/__init__, errors) and its runtime wheels
FROM scratch
ADD rootfs.tar /
COPY app/ /opt/extender/
ENV PYTHONPATH=/opt/extender \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Every runtime import resolves, and the image's uvicorn is one OneWrite hooks (else the build fails here,
# not on the wire with two writes per answer).
RUN ["/usr/bin/python3", "-c", "import scheduler_build.extender.cli, scheduler_build.extender.server, msgspec, prometheus_client, kubernetes; from scheduler_build.extender.one_write import http_protocol; p = http_protocol(); assert not isinstance(p, str) and p.__name__ == 'OneWriteHttpToolsProtocol', 'OneWrite is off with this uvicorn'; print('OneWrite on:', p.__mro__[1].__module__)"]
USER 65532:65532
EXPOSE 8888
ENTRYPOINT ["/usr/bin/python3", "-m", "scheduler_build.extender", "--host", "0.0.0.0"]
