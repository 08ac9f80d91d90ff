"""A reference DSL runtime whose decorators keep no Python frame alive.

leakgate audits the ``kernel`` and ``jit`` decorators of GPU DSLs; this
package is the baseline they are compared against, and a pattern a DSL
author can copy.

The bug it guards against
-------------------------
A DSL decorator wants to know where the user wrote the kernel, so it looks
at the caller's frame. nvidia-cutlass-dsl 4.6.1 did it by naming its own
frame in a local::

    cur_frame = inspect.currentframe()   # this frame, held by this frame
    frame = cur_frame.f_back

The frame now refers to itself through its locals, so reference counting can
never free it: only the cyclic collector can. A frame keeps its ``f_back``
alive, and with it the caller's frame, that frame's caller, and every local
in all of them. Whatever sat on the stack when a kernel was merely *defined*
(a tensor held by the function that lazily imported a kernel module, say)
stays allocated until the next ``gc.collect()``: in a program that called
``gc.disable()``, until never.

The pattern used here
---------------------
1. Read the few fields you need from a frame in the same expression that
   obtains it, so the frame is only ever a temporary (see ``_read_site``).
   If it must be bound to a name, ``del`` it in a ``finally``.
2. Hand on a plain, immutable value (``SourceLocation``), never a frame: not
   to the runner, not into a closure, not onto the function object.
3. Prefer the decorated function's code object: it already carries the file,
   the first line and the name of the definition, with no frame at all.

Location rule
-------------
``_decorator_location.line`` is the first line of the decorated definition
as CPython counts it, ``co_firstlineno``: the line of the topmost decorator,
which is the ``@kernel`` / ``@jit`` line itself when it is written alone or
first. This holds on every CPython from 3.8 on, the supported 3.10 to 3.13
included.

The caller frame's ``f_lineno`` is not used for functions because it is not
stable across versions: while a bare ``@kernel`` is applied, 3.10 reports the
``def`` line and 3.11 and later report the decorator's line. (The call
``kernel(...)`` of the with-options form is on the decorator's line
everywhere.) It is only the fallback for a decorated callable that has no
code object, such as an instance of a class with ``__call__``.

``function`` is the name of the decorated definition (``co_name``), not the
name of the scope it was defined in.
"""

from __future__ import annotations

import functools
import operator
import sys
import types
from typing import Any, Callable, Mapping, NamedTuple

__all__ = [
    "DSL",
    "DSLFunction",
    "SourceLocation",
    "TARGET_NAME",
    "jit",
    "jit_options",
    "kernel",
    "kernel_options",
    "scalar_types",
]


class SourceLocation(NamedTuple):
    """Where a kernel or jit function was defined; plain data, no frame."""

    file: str
    line: int
    function: str


# Pulls (file, line, scope name) out of a frame in one C call. Used as
# ``_read_site(sys._getframe(1))`` the frame is an argument temporary: it is
# never bound to a Python name, and it is released before the statement ends.
_read_site = operator.attrgetter("f_code.co_filename", "f_lineno", "f_code.co_name")


def _location_of(fn: Callable[..., Any], call_site: SourceLocation) -> SourceLocation:
    """The location recorded for ``fn``; ``call_site`` is used only without a code object."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if isinstance(code, types.CodeType):
        return SourceLocation(code.co_filename, code.co_firstlineno, code.co_name)
    name = getattr(fn, "__name__", type(fn).__name__)
    return SourceLocation(call_site.file, call_site.line, name)


class DSLFunction:
    """What ``@kernel`` and ``@jit`` return: the user's function plus plain metadata.

    A real DSL would trace, compile and launch here; the reference just calls
    the Python function. Everything it stores is data: the function, the kind,
    the (read-only) options and a ``SourceLocation``.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        kind: str,
        options: Mapping[str, Any],
        location: SourceLocation,
    ) -> None:
        functools.update_wrapper(self, func)  # sets __name__, __doc__, __wrapped__, ...
        self.kind = kind
        self.options = options
        self._decorator_location = location

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        loc = self._decorator_location
        return f"<{self.kind} {loc.function} at {loc.file}:{loc.line}>"


class DSL:
    """The decorator entry points, shaped like a real DSL's ``BaseDSL``.

    ``kernel`` and ``jit`` are classmethods used bare (``@DSL.kernel``) or with
    options (``@DSL.kernel(max_threads=128)``). Each one reads its call site
    eagerly, then hands plain values to ``_runner``, which validates the
    arguments and returns (or, bare, applies) the decorator.
    """

    # Accepted keyword options per decorator kind, with their types.
    OPTIONS: Mapping[str, Mapping[str, type]] = types.MappingProxyType(
        {
            "kernel": types.MappingProxyType({"name": str, "max_threads": int}),
            "jit": types.MappingProxyType({"name": str, "preprocess": bool}),
        }
    )

    @classmethod
    def kernel(cls, *dargs: Any, **dkwargs: Any) -> Any:
        # The caller's frame is a temporary inside this one expression. Do not
        # write ``cur = inspect.currentframe()``: naming this frame in its own
        # locals is the 4.6.1 cycle.
        call_site = SourceLocation(*_read_site(sys._getframe(1)))
        return cls._runner("kernel", call_site, dargs, dkwargs)

    @classmethod
    def jit(cls, *dargs: Any, **dkwargs: Any) -> Any:
        call_site = SourceLocation(*_read_site(sys._getframe(1)))
        return cls._runner("jit", call_site, dargs, dkwargs)

    @classmethod
    def _runner(
        cls,
        kind: str,
        call_site: SourceLocation,
        dargs: tuple[Any, ...],
        dkwargs: dict[str, Any],
    ) -> Any:
        """Validate the decorator's arguments and build the decorator.

        The closure below captures ``cls``, ``kind``, ``options`` and
        ``call_site``: all plain values, so the decorator can be kept or
        dropped without keeping any frame alive.
        """
        if dargs and dkwargs:
            raise TypeError(f"@{kind} takes either a function or keyword options, not both")
        if len(dargs) > 1 or (dargs and not callable(dargs[0])):
            raise TypeError(f"@{kind} takes one callable, or keyword options only")
        options = cls._normalise_options(kind, dkwargs)

        def decorator(fn: Callable[..., Any]) -> DSLFunction:
            if not callable(fn):
                raise TypeError(f"@{kind} can only decorate a callable, got {type(fn).__name__}")
            return DSLFunction(fn, kind, options, _location_of(fn, call_site))

        return decorator(dargs[0]) if dargs else decorator

    @classmethod
    def _normalise_options(cls, kind: str, dkwargs: Mapping[str, Any]) -> Mapping[str, Any]:
        accepted = cls.OPTIONS[kind]
        for key, value in dkwargs.items():
            if key not in accepted:
                known = ", ".join(sorted(accepted))
                raise TypeError(f"@{kind} got unknown option {key!r} (known: {known})")
            if not isinstance(value, accepted[key]):
                raise TypeError(
                    f"@{kind} option {key!r} must be {accepted[key].__name__}, "
                    f"got {type(value).__name__}"
                )
        return types.MappingProxyType(dict(sorted(dkwargs.items())))


# The leakgate target protocol: this package can itself be audited.
TARGET_NAME = "reference"
# No distribution is under test: the gate imports leakgate's own copy of this package (its folder
# goes first on sys.path), whatever is installed. An empty tuple spares the worker the search of
# every installed distribution's files for the one that owns this module (about 60 ms).
TARGET_PACKAGE: tuple[str, ...] = ()
kernel = DSL.kernel
jit = DSL.jit
kernel_options: dict[str, Any] = {"max_threads": 128}
jit_options: dict[str, Any] = {"preprocess": False}


def __getattr__(name: str) -> Any:
    """``scalar_types`` (the launch extension of the target protocol), loaded on first use.

    The scalars module imports ctypes, whose import leaves cyclic garbage of
    its own under ``gc.disable()``; loading it lazily keeps importing this
    package as light as before. See ``leakgate_reference.scalars``.
    """
    if name == "scalar_types":
        from .scalars import scalar_types

        return scalar_types
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
