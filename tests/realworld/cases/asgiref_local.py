"""asgiref: Local._lock_storage yields from inside an `except` block (Python 3.12+).

https://github.com/django/asgiref/issues/487, https://github.com/django/asgiref/pull/508
("Fixed reference cycle in Local"); CPython behaviour: https://github.com/python/cpython/issues/87699.
In 3.8.1, in a sync thread `asyncio.get_running_loop()` raises RuntimeError and the
`@contextmanager` generator yields the storage inside the `except RuntimeError:` clause. The
AttributeError of a missing attribute is thrown into the suspended generator and the tracebacks
and the generator frame's exception state form a cycle (on 3.12 and 3.13). Every
missing-attribute lookup on a thread-critical Local makes one.
"""
# package: asgiref
# leaking: 3.8.1
# fixed: 3.9.0
# python: 3.12+
# culprit: asgiref.local.Local._lock_storage

from asgiref.local import Local


def get_setting(local, name):
    payload = bytearray(4 << 20)
    try:
        return getattr(local, name)
    except AttributeError:
        return len(payload)


get_setting(Local(thread_critical=True), "missing")
