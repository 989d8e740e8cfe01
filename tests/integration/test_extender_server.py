"""Integration tests beside tests/unit/extender/test_server.py (they start containers, compile, or run the real tools);
moved out of the unit tier. That file: The extender over real HTTP: uvicorn on 127.0.0.1, keep-alive, body cap, TLS and
"""

from __future__ import annotations
import asyncio
import http.client
import os
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
import msgspec
import pytest
from testkit.extender_fixtures import small_cluster, synced_extender
from testkit import apistub
from testkit import samples
from scheduler_build import pki
from scheduler_build.extender.server import Server, TLSOptions
from tests.unit.extender.test_server import (  # noqa: F401  shared with the unit tests: helpers and fixtures
    NODES, WANTS, _client, _free_port, _get, _start, post,
)


def test_process_without_api_server_answers_not_ready(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(HOME=str(tmp_path), KUBERNETES_SERVICE_HOST="")  # no ~/.kube/config, not in a cluster
    port = _free_port()
    proc = _start([], port, env)
    try:
        assert _get(port, "/healthz") == 200
        assert _get(port, "/readyz") == 503
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        resp, data = post(conn, "/filter", msgspec.json.encode(samples.filter_args(WANTS, NODES, True)))
        assert resp.status == 200 and "not ready" in msgspec.json.decode(data)["Error"]
        resp, data = post(conn, "/bind", msgspec.json.encode(samples.bind_args(WANTS, "n-free")))
        assert "no Kubernetes API configured" in msgspec.json.decode(data)["Error"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    # Structured logs: every stderr line is a JSON object.
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(msgspec.json.decode(line)["level"] for line in lines)


def test_hundreds_of_keep_alive_clients_get_correct_answers(tmp_path):
    stub = apistub.ApiStub()
    nodes, pods = samples.cluster(200, pods_per_node=3, capacity=2, images=2)
    stub.load("nodes", nodes)
    stub.load("pods", pods)
    stub.start()
    port = _free_port()
    proc = _start(["--kubeconfig", str(stub.kubeconfig(tmp_path / "kubeconfig")), "--log-level", "warning"],
                  port, dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        while _get(port, "/readyz") != 200:
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.1)
        # Node i holds i % 4 opted-in pods, capacity 2: full when i % 4 >= 2.
        expected_pass = [n["metadata"]["name"] for i, n in enumerate(nodes) if i % 4 < 2]
        names_body = msgspec.json.encode(samples.filter_args(WANTS, nodes, True))
        list_body = msgspec.json.encode(samples.filter_args(WANTS, nodes[:20], False))
        prio_body = msgspec.json.encode(samples.filter_args(WANTS, nodes, True))
        bodies = [(b"/filter", names_body), (b"/prioritize", prio_body), (b"/filter", list_body)]

        async def main():
            return await asyncio.gather(*(_client(port, bodies[i % 3:] + bodies[:i % 3], 6) for i in range(300)))

        results = asyncio.run(main())
        count = 0
        for per_client in results:
            for status, data in per_client:
                assert status == 200
                reply = msgspec.json.decode(data)
                if isinstance(reply, list):
                    assert [h["Score"] for h in reply] == [[10, 5, 0, 0][i % 4] for i in range(len(nodes))]
                elif reply["NodeNames"] is not None:
                    assert reply["NodeNames"] == expected_pass and reply["Error"] == ""
                else:
                    assert [n["metadata"]["name"] for n in reply["Nodes"]["items"]] == \
                        [n for n in expected_pass if int(n.rsplit("-", 1)[1]) < 20]
                count += 1
        assert count == 300 * 6
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
        stub.stop()
