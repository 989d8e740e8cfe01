"""`scheduler-extender` (the console script containers run) ends a user error in one line, like
`scheduler-build extender.serve`: a taken port is the user's to fix, not a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("flag", ["--port", "--health-port"])
def test_a_taken_port_is_one_error_line(flag):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["--port", str(port)] if flag == "--port" else ["--port", "0", "--health-port", str(port)]
        proc = subprocess.run([sys.executable, "-m", "scheduler_build.extender", *args], capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("{")]  # JSON log lines aside
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert errors == [f"error: extender: cannot listen on 127.0.0.1:{port}: Address already in use; "
                      f"pick another {flag} (0 for a free one) or --host"]
