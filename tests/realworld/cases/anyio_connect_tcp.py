"""anyio: connect_tcp keeps the per-attempt OSErrors in a closed-over list (happy eyeballs).

https://github.com/agronholm/anyio/pull/809 ("Avoid refcycles in tracebacks from happy eyeballs
exceptions"), after https://github.com/python/cpython/pull/124859. In 4.8.0 the nested
`try_connect` appends each failure to the `oserrors` list it shares with `connect_tcp`; each
failure's traceback holds a frame that references that list. 4.9.0 clears it in a `finally`.
Connects to a closed port on 127.0.0.1 (no network).
"""
# package: anyio
# leaking: 4.8.0
# fixed: 4.9.0
# python: 3.11+
# culprit: anyio._core._sockets.connect_tcp

import socket

import anyio


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def fetch(port):
    payload = bytearray(4 << 20)
    try:
        await anyio.connect_tcp("127.0.0.1", port)
    except OSError:
        pass
    return len(payload)


def main():
    payload = bytearray(4 << 20)
    anyio.run(fetch, closed_port())
    return len(payload)


main()
