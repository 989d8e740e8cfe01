"""The benchmark's Go baseline must decide like the Python extender, or the
side-by-side figures compare different work. Builds the two small stdlib Go
programs once (content-addressed cache) and runs a two-second load smoke."""

from __future__ import annotations

import http.client
from pathlib import Path

import msgspec

from testkit import samples

REPO = Path(__file__).resolve().parents[2]


def test_go_baseline_agrees_with_python_and_loadgen_runs(tmp_path):
    from bench.extender import common

    bins = common.go_binaries()
    with common.cluster(60, capacity=3) as stub:
        kubeconfig = stub.kubeconfig(tmp_path / "kubeconfig")
        go_port, py_port = common.free_port(), common.free_port()
        go_cmd = [str(bins["goextender"]), "-addr", f"127.0.0.1:{go_port}", "-api", stub.url]
        with common.process(go_cmd, f"http://127.0.0.1:{go_port}"), \
                common.process(common.python_extender(kubeconfig, py_port), f"http://127.0.0.1:{py_port}"):
            for pod in (samples.pod("wants"), samples.pod("plain", opt_in=False)):
                for mode in (False, True):
                    body = msgspec.json.encode(samples.filter_args(pod, stub.node_objs, mode))
                    replies = {}
                    for side, port in (("go", go_port), ("python", py_port)):
                        for verb in ("filter", "prioritize"):
                            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                            conn.request("POST", f"/{verb}", body=body)
                            resp = conn.getresponse()
                            assert resp.status == 200
                            replies[side, verb] = msgspec.json.decode(resp.read())
                            conn.close()
                    assert replies["go", "filter"] == replies["python", "filter"]
                    assert replies["go", "prioritize"] == replies["python", "prioritize"]
                    if pod["metadata"]["name"] == "wants":  # the comparison covered real decisions
                        assert len(replies["python", "filter"]["FailedNodes"]) > 10
                        assert {h["Score"] for h in replies["python", "prioritize"]} >= {0, 3, 6, 10}
            failed = replies["python", "filter"]["FailedNodes"]
            assert failed == {}  # the last pod did not opt in
            result = common.load(bins["loadgen"], f"http://127.0.0.1:{py_port}/filter", body, 1, 2, '"Error":""')
            assert result["requests"] > 0 and result["errors"] == 0 and result["p99_ms"] >= result["p50_ms"] > 0
