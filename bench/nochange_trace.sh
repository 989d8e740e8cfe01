#!/usr/bin/env bash
# (The bind-mount layout of a499fca: the figures of "Where the no-change rebuild's fixed cost goes". Issue 19's
# engine-API compile is compared with `inv bench.build --plugin-edit --baseline a499fca` instead.)
# Where the no-change rebuild's fixed cost goes (BENCHMARKS.md): the compile's own no-op
# `go build` timed inside the builder container (a long-lived one via docker exec, and a
# fresh `docker run`) against the container's lifecycle and the plugin module's native build.
# Run from the repository root after `bash ci/setup.sh`; prints one line per round.
set -euo pipefail
export PATH=/usr/local/go/bin:$PATH
# The mounts of the example spec's compile, as the build itself chooses them.
eval "$(python3 - <<'PY'
import shlex, sys
import scheduler_build.build.compile as compile_stage
from invoke.main import program
seen = []
real = compile_stage.run
def spy(engine, image, job, *args, **kwargs):
    seen.append((job, image))
    return real(engine, image, job, *args, **kwargs)
compile_stage.run = spy
sys.argv = ["inv", "build", "--spec", "examples/underlay/scheduler.yaml"]
sys.stdout = sys.stderr  # the build's own result line is not for eval
try:
    program.run()
except SystemExit:
    pass
job, image = seen[-1]
overlay, = job.overlays.values()
values = {"WS": job.workspace, "VEN": job.vendor, "OVL": overlay, "IMG": image, "FLAGS": job.flags,
          "EPOCH": job.environment["SOURCE_DATE_EPOCH"]}
print("\n".join(f"{k}={shlex.quote(str(v))}" for k, v in values.items()), file=sys.__stdout__)
PY
)"
OUT=$(mktemp -d)
ENVS=(-e CGO_ENABLED=0 -e GOOS=linux -e GOARCH=amd64 -e GOFLAGS=-mod=vendor -e GOPROXY=off -e GOTOOLCHAIN=local -e GOCACHE=/gocache -e GOMODCACHE=/tmp/gomodcache-unused -e HOME=/tmp -e SOURCE_DATE_EPOCH=$EPOCH)
MOUNTS=(-v $WS:/src:ro -v $VEN:/src/vendor:ro -v $OUT:/out -v scheduler-build-gocache:/gocache -v $OVL:/src/vendor/example.com/acme/underlay:ro)
BUILD="go build -trimpath -mod=vendor -buildvcs=false -tags selinux,notest -ldflags '$FLAGS' -o /out/kube-scheduler ."
now() { date +%s.%N; }
C=$(docker run -d --network none "${ENVS[@]}" "${MOUNTS[@]}" -w /src $IMG sleep 3600)
trap 'docker rm -f $C >/dev/null; rm -rf $OUT' EXIT
docker exec $C sh -c "$BUILD" # warm: output exists
(cd examples/underlay/plugin && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -tags selinux,notest -ldflags "$FLAGS" -o /tmp/native-ks ./cmd/scheduler)
for i in 1 2 3 4 5 6 7; do
  t0=$(now); docker exec $C sh -c "$BUILD"; t1=$(now)
  inner=$(docker exec $C sh -c "read s _ < /proc/uptime; $BUILD; read e _ < /proc/uptime; echo \$s \$e" | awk '{printf "%d", ($2-$1)*1000}')
  t2=$(now); docker exec $C true; t3=$(now)
  t4=$(now); docker run --rm --network none "${ENVS[@]}" "${MOUNTS[@]}" -w /src $IMG sh -c "$BUILD"; t5=$(now)
  t6=$(now); docker run --rm --network none "${ENVS[@]}" "${MOUNTS[@]}" -w /src $IMG true; t7=$(now)
  t8=$(now); (cd examples/underlay/plugin && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -tags selinux,notest -ldflags "$FLAGS" -o /tmp/native-ks ./cmd/scheduler); t9=$(now)
  printf 'exec_build=%.3f inner_build=%.3f exec_true=%.3f run_build=%.3f run_true=%.3f native=%.3f load=%s\n' \
    $(echo "$t1-$t0"|bc) $(echo "$inner/1000"|bc -l) $(echo "$t3-$t2"|bc) $(echo "$t5-$t4"|bc) $(echo "$t7-$t6"|bc) $(echo "$t9-$t8"|bc) "$(cut -d' ' -f1 /proc/loadavg)"
done
