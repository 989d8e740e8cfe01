"""Did the kubelet get its cgroup driver from the CRI runtime? Read from the kubelet's own log.

k8s.io/kubernetes cmd/kubelet/app/server.go, getCgroupDriverFromCRI (v1.36.3, v1.37.2): the
kubelet calls the CRI RuntimeConfig RPC at start-up. When the runtime answers (containerd 2.0+)
it logs ANSWERED with the driver it received; when the runtime answers Unimplemented
(containerd 1.x) it logs FALLBACK and uses `cgroupDriver` from its own configuration, the
fallback that KEP-4033 removes (kubernetes#136731). Both are Info (V(0)), so `--v=1` shows them.
"""

from __future__ import annotations

import re

ANSWERED = "Using cgroup driver setting received from the CRI runtime"
FALLBACK = "CRI implementation should be updated to support RuntimeConfig"
_DRIVER = re.compile(re.escape(ANSWERED) + r'"?\s+cgroupDriver="(\w+)"')


def driver_from_cri(log: str) -> str:
    """The cgroup driver the runtime answered with; AssertionError (with the line that says
    why) when the log shows the fallback or no answer at all."""
    fallback = [line for line in log.splitlines() if FALLBACK in line]
    assert not fallback, f"the runtime did not answer CRI RuntimeConfig: {fallback[0].strip()}"
    found = _DRIVER.findall(log)
    assert found, f"no {ANSWERED!r} line in the kubelet's log"
    return found[-1]
