"""aiohttp: the client protocol keeps the connection-loss exception after close.

https://github.com/aio-libs/aiohttp/issues/10535, https://github.com/aio-libs/aiohttp/pull/10556
(backport to 3.11: https://github.com/aio-libs/aiohttp/pull/10566). In 3.11.13 the
ResponseHandler (a DataQueue) keeps the ServerDisconnectedError it was given; that exception's
traceback holds frames whose locals reference the protocol and the ClientResponse, so the
response outlives the request. 3.11.14 sets `self._exception = None` in
`ResponseHandler.close`. After upstream's tests/isolated/check_for_client_response_leak.py; the
server is aiohttp's own, on 127.0.0.1.
"""
# package: aiohttp
# leaking: 3.11.13
# fixed: 3.11.14
# python: 3.11+
# culprit: aiohttp.client_proto.ResponseHandler.close

import asyncio
import contextlib

from aiohttp import ClientError, ClientSession, web
from aiohttp.test_utils import get_unused_port_socket


async def hang_up(request):
    request.transport.close()  # the server drops the connection before answering
    return web.Response()


async def fetch(session, url):
    payload = bytearray(4 << 20)
    with contextlib.suppress(ClientError):
        await session.get(url)
    return len(payload)


async def main():
    app = web.Application()
    app.router.add_get("/", hang_up)
    sock = get_unused_port_socket("127.0.0.1")
    port = sock.getsockname()[1]
    runner = web.AppRunner(app)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    async with ClientSession() as session:
        await fetch(session, f"http://127.0.0.1:{port}/")
    await runner.cleanup()


asyncio.run(main())
