"""asgiref: SyncToAsync.thread_handler keeps the awaiting task in a local.

https://github.com/django/asgiref/pull/386 ("Better garbage-collection on exceptions in
sync_to_async"). In 3.6.0, when the wrapped sync function raises inside `thread_handler`, whose
local `source_task` is the asyncio task awaiting it, and that exception ends the task:
task -> _exception -> traceback -> thread_handler frame -> source_task -> task.
3.7.0 sets `source_task = None` before running the function.
"""
# package: asgiref
# leaking: 3.6.0
# fixed: 3.7.0
# python: 3.11+
# culprit: asgiref.sync.SyncToAsync.thread_handler

import asyncio

from asgiref.sync import sync_to_async


def boom():
    raise ValueError("no such record")


async def lookup():
    payload = bytearray(4 << 20)
    await sync_to_async(boom)()
    return len(payload)


async def main():
    # The task running lookup() ends with the ValueError; gather hands it back as a result,
    # so no frame of this script holds the task.
    results = await asyncio.gather(lookup(), return_exceptions=True)
    return type(results[0]).__name__


asyncio.run(main())
