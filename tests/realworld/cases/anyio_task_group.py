"""anyio (asyncio backend): TaskGroup.__aexit__ and CancelScope.__exit__ keep exceptions in locals.

https://github.com/agronholm/anyio/pull/806 ("fix cyclic garbage that keeps traceback frames
alive in taskgroup exceptions"). In 4.6.0 the ExceptionGroup raised out of a task group reaches
frames whose locals (`exc_val`, `exc_tb`, `self`) refer back to it. Here (upstream's
`test_exception_refcycles_parent_task`): the child task stores the inner group as its exception;
the group's traceback holds the inner `TaskGroup.__aexit__` frame, whose `self` is the task group,
whose cancel scope keeps `_host_task`: the child task. 4.6.1 deletes the locals and clears `_host_task` in `finally` blocks.
"""
# package: anyio
# leaking: 4.6.0
# fixed: 4.6.1
# python: 3.11+
# culprit: anyio._backends._asyncio.TaskGroup.__aexit__

import anyio


class Done(Exception):
    pass


async def child():
    payload = bytearray(4 << 20)
    async with anyio.create_task_group():
        raise Done  # leaves the inner task group as an ExceptionGroup holding Done
    return len(payload)


async def handle():
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(child)
    except BaseException:  # an ExceptionGroup holding the child's ExceptionGroup
        pass


def main():
    payload = bytearray(4 << 20)
    anyio.run(handle)
    return len(payload)


main()
