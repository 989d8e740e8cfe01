"""The same Extender core behind the server libraries compared by choose_server.py.

uvicorn runs the shipped adapter (scheduler_build/extender/server.py); aiohttp
and granian get thin adapters here, used only for the measurement.
"""

from __future__ import annotations

import os

from scheduler_build.extender.service import ServeConfig, create
from scheduler_build.extender.server import AsgiApp


def _extender():
    ext, _ = create(ServeConfig(kubeconfig=os.environ["BENCH_KUBECONFIG"]))
    ext.cache.wait_synced(60)
    return ext


def granian_app():
    """granian --factory target: the shipped ASGI adapter."""
    return AsgiApp(_extender())


def run_aiohttp(port: int) -> None:
    import asyncio

    import uvloop
    from aiohttp import web

    ext = _extender()
    cap = ext.options.max_body_bytes

    async def handler(request: web.Request) -> web.Response:
        too_large = (request.content_length or 0) > cap
        body = b"" if too_large or request.method != "POST" else await request.read()
        resp = await ext.handle(request.method, request.path, body, too_large)
        return web.Response(status=resp.status, body=resp.body, headers={"Content-Type": resp.content_type,
                                                                         **resp.headers})

    app = web.Application(client_max_size=cap)
    app.router.add_route("*", "/{tail:.*}", handler)
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None, keepalive_timeout=120)


if __name__ == "__main__":
    import sys

    run_aiohttp(int(sys.argv[1]))
