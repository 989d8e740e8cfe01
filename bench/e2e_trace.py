"""Where a `bench.e2e` variant's time goes (`inv bench.e2e --trace`).

Per variant: CPU seconds of every process involved (etcd, kube-apiserver, the
scheduler, the extender; utime + stime of all threads from /proc/<pid>/stat),
the machine's load average, and the extender's own view from its /metrics
(requests, mean handling time, names per request). With py-spy on PATH the
extender is also sampled (`py-spy record --format raw`, collapsed stacks) while
the variant runs; `top_frames` sums those by leaf and by frame.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
_SAMPLE = re.compile(r'^(\w+)(?:\{([^}]*)\})? (\S+)$')


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (all its threads), None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of stat(5)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class CpuMeter:
    """CPU seconds spent by named pids between start() and stop()."""

    def __init__(self, pids: dict[str, int]):
        self.pids = dict(pids)
        self._before: dict[str, float] = {}

    def start(self) -> "CpuMeter":
        self._before = {name: cpu_seconds(pid) or 0.0 for name, pid in self.pids.items()}
        return self

    def stop(self) -> dict[str, float]:
        out = {}
        for name, pid in self.pids.items():
            now = cpu_seconds(pid)
            out[name] = round((now if now is not None else self._before[name]) - self._before[name], 2)
        return out


def parse_metrics(text: str) -> dict[tuple[str, tuple], float]:
    """Prometheus text exposition as {(name, sorted label pairs): value}."""
    out: dict[tuple[str, tuple], float] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m:
            continue
        labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def extender_summary(before: dict, after: dict) -> dict:
    """Per verb: requests, mean handling ms, and names per request (filter, prioritize)."""
    def delta(name: str, **labels: str) -> float:
        want = set(labels.items())
        return sum(v - before.get(k, 0.0) for k, v in after.items() if k[0] == name and want <= set(k[1]))

    out = {}
    for verb in ("filter", "prioritize"):
        count = delta("extender_request_duration_seconds_count", verb=verb)
        if not count:
            continue
        total = delta("extender_request_duration_seconds_sum", verb=verb)
        names = (delta("extender_decisions_total", verb=verb, outcome="node_passed")
                 + delta("extender_decisions_total", verb=verb, outcome="node_failed")) if verb == "filter" \
            else delta("extender_decisions_total", verb=verb, outcome="scored")
        out[verb] = {"requests": int(count), "mean_ms": round(1000 * total / count, 3),
                     "names_per_request": round(names / count, 1)}
    return out


class PySpy:
    """`py-spy record` of one pid into a raw (collapsed stacks) file, if py-spy is installed."""

    def __init__(self, pid: int, out: Path, rate: int = 200):
        exe = shutil.which("py-spy")
        self.out = out
        self.proc = None
        if exe:
            self.proc = subprocess.Popen([exe, "record", "-p", str(pid), "-r", str(rate), "--format", "raw",
                                          "-o", str(out), "--nonblocking"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> Path | None:
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.out if self.out.exists() else None


def top_frames(raw: Path, limit: int = 25) -> dict:
    """From collapsed stacks: samples in total, by leaf frame, and by frame anywhere on the stack."""
    leaf: Counter = Counter()
    inclusive: Counter = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        leaf[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    return {"samples": total, "leaf": leaf.most_common(limit), "inclusive": inclusive.most_common(limit)}
