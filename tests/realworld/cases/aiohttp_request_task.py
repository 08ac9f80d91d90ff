"""aiohttp: RequestHandler.start keeps its own task in a local; the cancelled task keeps the Request.

https://github.com/aio-libs/aiohttp/issues/10548, https://github.com/aio-libs/aiohttp/pull/10569
(backport to 3.11: https://github.com/aio-libs/aiohttp/pull/10571). The Request holds its task (`request._task`), and `RequestHandler.start` keeps that task in its
local `handler`. When the client closes a keep-alive connection, the waiting `start` is cancelled;
the task keeps the CancelledError, whose traceback holds `start`'s frame (locals `handler`,
`request`): task -> CancelledError -> traceback -> start frame -> handler -> task, keeping the last
request and what the handler stored on it. (A handler that raises an HTTPException makes a second
cycle, `resp = exc` in `_handle_request`, that 3.11.14 still has; this driver avoids it.)
3.11.14 drops the `handler = asyncio.current_task()` local and sets `request._task = None` in
`start`'s `finally`. After upstream's tests/isolated/check_for_request_leak.py, with a handler
that answers; the server is aiohttp's own, on 127.0.0.1.
"""
# package: aiohttp
# leaking: 3.11.13
# fixed: 3.11.14
# python: 3.11+
# culprit: aiohttp.web_protocol.RequestHandler.start

import asyncio

from aiohttp import ClientSession, web
from aiohttp.test_utils import get_unused_port_socket


async def json_handler(request):
    request["scratch"] = bytearray(4 << 20)  # per-request state the handler keeps on the request
    return web.json_response({"ok": True})


async def main():
    app = web.Application()
    app.router.add_get("/json", json_handler)
    sock = get_unused_port_socket("127.0.0.1")
    port = sock.getsockname()[1]
    runner = web.AppRunner(app)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    async with ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/json") as response:
            await response.read()
    await asyncio.sleep(0.2)
    await runner.cleanup()


asyncio.run(main())
