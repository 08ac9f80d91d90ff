"""The Python API over the extension module: regions, sentinels, explain() and the assertion
helpers. Each measurement is the library's own (leakgate_dsl._native, the code the CLI's workers
run); this file only checks arguments, shapes results and words the assertions."""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from leakgate_dsl import _native
from leakgate_dsl._results import Result, result_from

# How sentinels may be judged: each freed by reference counting (the default), or at least by the
# cyclic collector (never-freed still fails).
SENTINEL_RULES = ("freed-by-refcount", "freed-by-gc")


class MeasurementError(RuntimeError):
    """The measurement could not be made, so there is no verdict (never a pass): gc was
    re-enabled, a collection ran whose garbage leakgate could not read, or the measured code
    raised."""


class Region:
    """A measured region. On entry: the cyclic GC is disabled, what is already garbage is
    collected, the probes start. On exit: the three reads (docs/definitions.md, "Reads"), and
    `result` holds the verdicts. Each is entered once. Regions nest (the fixture's helpers inside
    a test the pytest plugin measures): an inner region judges its own body, and the outer one
    counts that body as its own, taking over what the inner reads found and freed.

        with leakgate_dsl.region("decorate") as r:
            user_code()        # makes its sentinels, calls the DSL
        print(r.result.text)   # the same text `leakgate scan` prints

    Sentinels made directly in the block are locals of the frame running the `with`, which is
    still alive at the first read; make them in the code under test (a function the block calls).
    If the body raises, nothing is measured (the traceback keeps its frames alive): every check is
    `error` and the exception propagates.
    """

    def __init__(self, name: str = "region", *, held: bool = False, held_entries: Optional[int] = None,
                 held_bytes: Optional[int] = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"region(): name must be a str, not {type(name).__name__}")
        for what, value in (("held_entries", held_entries), ("held_bytes", held_bytes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"region(): {what} must be a positive int, not {value!r}")
        self.name = name
        self.result: Optional[Result] = None
        if held or held_entries is not None or held_bytes is not None:
            # The held-growth check: what the body left in containers a library keeps (its limits,
            # default 1,000 entries or 64 MiB, as `leakgate scan`'s).
            self._native = _native.Region(name, held_entries or 1000, held_bytes or (64 << 20))
        else:
            self._native = _native.Region(name)

    def __enter__(self) -> "Region":
        self._native.begin()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            self.result = result_from(self._native.abandon(
                f"the region's body raised {exc_type.__name__}: {exc}; its traceback keeps the "
                "body's frames alive, so nothing was measured"))
            return False
        self.result = result_from(self._native.finish())
        return False

    def assert_clean(self, **limits: Any) -> Result:
        """As Result-level assert_clean(): raises AssertionError with the explanation."""
        if self.result is None:
            raise RuntimeError(f"region `{self.name}` has not been measured yet: assert after the block")
        return assert_clean(self.result, **limits)


def region(name: str = "region", *, held: bool = False, held_entries: Optional[int] = None,
           held_bytes: Optional[int] = None) -> Region:
    """A measured region for a `with` statement (see Region). `held=True` (or a limit) adds the
    held-growth check: a container a library keeps that gained `held_entries` entries (default
    1,000) or whose new entries keep `held_bytes` (default 64 MiB) during the body fails."""
    return Region(name, held=held, held_entries=held_entries, held_bytes=held_bytes)


def measure(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Result:
    """Calls fn(*args, **kwargs) in a region and returns the result. fn's own frame has returned
    before the reads, so the sentinels it makes are judged as the caller's data would be."""
    name = getattr(fn, "__qualname__", None) or repr(fn)
    with Region(name) as measured:
        fn(*args, **kwargs)
    return measured.result


def _require_measurement(what: str) -> None:
    if not _native.session_active():
        raise RuntimeError(f"{what}(): no region is measuring, so nothing would judge this sentinel; "
                           "make sentinels inside a region (leakgate_dsl.region(), measure(), or a "
                           "test the pytest plugin measures)")


def _check_sentinel_args(what: str, label: Any, nbytes: Any) -> None:
    if not isinstance(label, str) or not label:
        raise TypeError(f"{what}(): label must be a non-empty str, not {label!r}")
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"{what}(): nbytes must be an int, not {type(nbytes).__name__}")
    if nbytes <= 0:
        raise ValueError(f"{what}(): nbytes must be positive (a sentinel owns memory), got {nbytes}")
    _require_measurement(what)


def sentinel(label: str, nbytes: int) -> "_native.HostSentinel":
    """A host sentinel owning `nbytes` of resident host memory, judged at the region's end:
    freed-by-refcount, freed-by-gc-only or never-freed."""
    _check_sentinel_args("sentinel", label, nbytes)
    return _native.sentinel(label, nbytes)


def device_sentinel(label: str, nbytes: int) -> "_native.DeviceSentinel":
    """A device sentinel owning `nbytes` of device memory (cuMemAlloc in the primary context,
    through the same driver loader as the CLI). Raises CudaUnavailable with the reason when CUDA
    cannot be used."""
    _check_sentinel_args("device_sentinel", label, nbytes)
    return _native.device_sentinel(label, nbytes)


def track(obj: Any, label: Optional[str] = None, nbytes: Optional[int] = None,
          kind: Optional[str] = None) -> Any:
    """Judges any weakref-able object as a sentinel (a torch tensor, a DSL buffer). `nbytes`
    defaults to obj.nbytes, or element_size() * nelement() (torch), or sys.getsizeof; `kind` to
    "device" for an object whose `is_cuda` is true, else "host". Returns obj."""
    try:
        weakref.ref(obj)
    except TypeError:
        raise TypeError(f"track(): `{type(obj).__name__}` objects cannot be weakly referenced, so "
                        "leakgate cannot see when one is freed; track an object that can be (an "
                        "instance of a class, a tensor)") from None
    if nbytes is None:
        nbytes = getattr(obj, "nbytes", None)
        if nbytes is None and hasattr(obj, "element_size") and hasattr(obj, "nelement"):
            nbytes = obj.element_size() * obj.nelement()
        if not isinstance(nbytes, int):
            nbytes = sys.getsizeof(obj)
    if kind is None:
        kind = "device" if getattr(obj, "is_cuda", False) is True else "host"
    label = label if label is not None else type(obj).__name__
    _check_sentinel_args("track", label, nbytes)
    _native.track(obj, label, kind, nbytes)
    return obj


def explain(objects: Iterable[Any]) -> Result:
    """The scanner over any objects, as if a DEBUG_SAVEALL collection had saved them (pass
    gc.garbage after one): the frame cycles among them, explained as the CLI explains them."""
    return result_from(_native.explain(list(objects)))


def cuda_status() -> dict:
    """Whether CUDA can be used here, and if not, why."""
    return _native.cuda_status()


# ---- judging ---------------------------------------------------------------------------------

def _require_valid(result: Result) -> None:
    """MeasurementError naming why, when `result` could not be measured."""
    if not result.valid:
        reasons = result.error or "; ".join(f"{c.name}: {c.reason}" for c in result.checks
                                            if c.status == "error")
        raise MeasurementError(f"leakgate could not measure `{result.name}`: {reasons}")


def violations(result: Result, *, frame_cycles: Optional[int] = 0, retained_frames: Optional[int] = 0,
               sentinels: Optional[str] = "freed-by-refcount", allocations: Optional[int] = None,
               net_blocks: Optional[int] = None, cyclic_garbage: Optional[int] = None) -> list[str]:
    """What in `result` breaks the limits, one line each (empty: clean). None skips a limit.
    Raises MeasurementError when the result is not valid: an invalid measurement is no pass."""
    if sentinels is not None and sentinels not in SENTINEL_RULES:
        raise ValueError(f"sentinels={sentinels!r}: expected one of {', '.join(SENTINEL_RULES)} or None")
    _require_valid(result)
    found = []
    cycles = result.frame_cycles
    if frame_cycles is not None and len(cycles) > frame_cycles:
        found.append(f"{len(cycles)} frame-cycle shape{'s' if len(cycles) != 1 else ''} (at most "
                     f"{frame_cycles}): {cycles[0].summary}")
    retained = result.retained_frames
    if retained_frames is not None and len(retained) > retained_frames:
        found.append(f"{len(retained)} retained frame{'s' if len(retained) != 1 else ''} (at most "
                     f"{retained_frames}): {retained[0].summary}")
    if sentinels is not None:
        allowed = {"freed-by-refcount"} if sentinels == "freed-by-refcount" else \
            {"freed-by-refcount", "freed-by-gc-only"}
        for verdict in result.sentinels:
            if verdict.verdict not in allowed:
                found.append(f"sentinel `{verdict.label}` ({verdict.bytes} bytes, {verdict.kind}) was "
                             f"{verdict.verdict}")
    for name, limit, value in (("allocations", allocations, result.allocations),
                               ("net blocks", net_blocks, result.net_blocks),
                               ("cyclic-garbage objects", cyclic_garbage, result.cyclic_garbage)):
        if limit is not None and value is not None and value > limit:
            found.append(f"{value} {name} (at most {limit})")
    device = result.check("device-memory")
    if device is not None and device.status == "fail":
        found.append(f"device memory: {device.reason}")
    held = result.check("held-growth")  # only in a region made with held=True
    if held is not None and held.status == "fail":
        found.append(f"held growth: {held.reason}")
    return found


def assert_clean(result: Result, **limits: Any) -> Result:
    """Raises AssertionError with leakgate's explanation when `result` breaks the limits of
    violations() (by default: no frame cycle, no retained frame, every sentinel freed by
    reference counting); MeasurementError when it is not valid. Returns the result."""
    found = violations(result, **limits)
    if found:
        raise AssertionError("leakgate: " + "; ".join(found) + "\n\n" + result.text)
    return result


def assert_no_frame_cycles(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Result:
    """Calls fn in a region; AssertionError with the explanation if it left a frame in cyclic
    garbage."""
    return assert_clean(measure(fn, *args, **kwargs), frame_cycles=0, retained_frames=None,
                        sentinels=None)


def assert_sentinels_freed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Result:
    """Calls fn in a region; AssertionError with the explanation unless every sentinel it made was
    freed by reference counting. fn must make at least one (else MeasurementError)."""
    result = measure(fn, *args, **kwargs)
    if not result.sentinels:
        raise MeasurementError(f"`{result.name}` made no sentinel, so there is nothing to judge")
    return assert_clean(result, frame_cycles=None, retained_frames=None, sentinels="freed-by-refcount")


@dataclass(frozen=True)
class PerCall:
    """Figures per call of a callable, after a warm-up: CPython allocator calls, net blocks
    (allocations minus frees) and objects left in cyclic garbage."""

    calls: int
    allocations: float
    net_blocks: float
    cyclic_garbage: float
    result: Result

    def __str__(self) -> str:
        return (f"{self.allocations:.2f} allocations, {self.net_blocks:.2f} net blocks, "
                f"{self.cyclic_garbage:.2f} cyclic-garbage objects per call ({self.calls} calls)")


def per_call(fn: Callable[[], Any], *, calls: int = 1000, warmup: int = 100) -> PerCall:
    """Calls fn() `warmup` times, then `calls` times from C inside one region (no Python loop in
    the counts), and divides."""
    for name, value, least in (("calls", calls, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"per_call(): {name} must be an int >= {least}, got {value!r}")
    if not callable(fn):
        raise TypeError(f"per_call(): {type(fn).__name__} object is not callable")
    for _ in range(warmup):
        fn()
    name = getattr(fn, "__qualname__", None) or repr(fn)
    with Region(f"{name} x{calls}") as measured:
        _native.call_n(fn, calls)
    result = measured.result
    _require_valid(result)
    return PerCall(calls, result.allocations / calls, result.net_blocks / calls,
                   result.cyclic_garbage / calls, result)


def assert_per_call(fn: Callable[[], Any], *, calls: int = 1000, warmup: int = 100,
                    allocations: Optional[float] = None, net_blocks: Optional[float] = None,
                    cyclic_garbage: Optional[float] = None) -> PerCall:
    """per_call(), then AssertionError naming each figure above its limit (None: not judged)."""
    figures = per_call(fn, calls=calls, warmup=warmup)
    found = [f"{value:.2f} {name} per call (at most {limit})"
             for name, limit, value in (("allocations", allocations, figures.allocations),
                                        ("net blocks", net_blocks, figures.net_blocks),
                                        ("cyclic-garbage objects", cyclic_garbage, figures.cyclic_garbage))
             if limit is not None and value > limit]
    if found:
        raise AssertionError(f"leakgate: {'; '.join(found)} over {figures.calls} calls\n\n{figures.result.text}")
    return figures
