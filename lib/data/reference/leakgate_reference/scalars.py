"""Scalar kernel arguments packed once, cached with a bound, and never rebuilt per launch.

A DSL launches a kernel by handing the driver one pointer per argument. For a
scalar such as ``Int32(64)`` the DSL's ``__c_pointers__()`` must return a
pointer to the packed bytes of the value. nvidia-cutlass-dsl built those
pointers afresh on every launch::

    c_value = ctypes.c_int32(value)
    return [ctypes.cast(ctypes.pointer(c_value), ctypes.c_void_p)]

Measured on CPython 3.10 to 3.13 with the cyclic collector disabled, that is
13 allocator calls per scalar per launch (14 with ``Int32(v)`` itself) and 3
objects of cyclic garbage: ``cast`` stores its source (the ``LP_c_int``
pointer) in that source's own ``_objects`` dict (CPython bpo-12836), so the
pointer, the dict and the ``c_int`` it holds can only be freed by
``gc.collect()``. A program that runs with ``gc.disable()`` keeps every
launch's arguments forever.

This module is the reference: the pattern a DSL can copy and the baseline the
launch checks of leakgate compare a target with. ``scalar_types`` maps the 14
type names of the launch target protocol to the classes below.

What a call costs (allocator calls: malloc, calloc or realloc in any of
CPython's domains; objects served from a free list, such as small tuples,
floats and small ints, make none)
----------------------------------------------------------------------
* ``T(v).__c_pointers__()`` once ``T(v)`` was seen: **0**. ``T(v)`` returns the
  instance interned for that value: a dict lookup, no new object. The
  ``T.__new__`` frame lives in the per-thread frame stack (3.11+) or is the code
  object's cached frame (3.10); the argument tuple of the class call comes from
  the tuple free list.
* ``t.__c_pointers__()`` on an existing instance: **0**. It returns the tuple
  that was built with the instance.
* First sight of a value (a miss): about 20 to 25 allocations, once: the
  packed ``bytes``, a read-only ``c_void_p``, the result tuple, the instance
  and the cache's bookkeeping. Once the table is full each miss also evicts
  one key, freeing about as many blocks as it allocates.
* On 3.10 only, once per function: CPython allocates a code object's opcache
  after its 1024th call, so a measurement must warm up past that.
* ``Float*(±0.0)``: 0, through two fixed instances per type kept out of the
  cache (see "Keys" below). ``Boolean(v)``: 0, two fixed instances.
* A NaN: a few allocations on **every** call (its bits are computed to find
  its slot), then the cached instance. Distinct payloads never share a slot.
* Exact ``int``, ``float`` and ``bool`` arguments only. Anything else (an
  ``IntEnum``, a ``Fraction``, a numpy scalar) is converted first, which may
  allocate, and then served from the cache.

Measured on 3.10.13, 3.11.7, 3.12.1 and 3.13.0 with an allocator hook that
wraps the RAW, MEM and OBJ domains and counts every successful malloc,
calloc and realloc (a measurement-only C extension, not shipped), and by
``tests/python/test_scalars.py`` (tracemalloc's peak and
``sys.getallocatedblocks()``): 0 allocations per call for both forms, for
every type, ±0.0 included; 3 per call for a NaN; no cyclic garbage, misses
and evictions included; over 10**6 distinct values the number of live blocks
stops growing once the table is full.

The cache
---------
One ``_ScalarCache`` per type (``Boolean`` needs none) holds at most
``CACHE_CAPACITY`` keys (4096). Eviction is CLOCK (second chance): a hit sets
the slot's bit in a ``bytearray``; on a miss with a full ring the hand clears
set bits until it finds a clear one and evicts that key. New entries start
with a clear bit, so a stream of values seen once cycles through the ring
while the values a training loop launches over and over stay. A hit mutates
nothing but one byte, so it never allocates (an LRU dict would re-insert the
key, and a dict that is appended to reallocates now and then). A full table
holds about 0.7 KiB per key (instance, bytes, pointer, tuples, dict slots):
about 2.9 MiB per type, so at most ~37 MiB if all 13 tables fill.

Keys
----
The hot path is ``table.get(v)`` on the Python value itself: equal Python
numbers are the same real number, so they have the same bits -- with two
exceptions, handled before the table is touched or kept out of it:

* ``0.0 == -0.0`` (and ``== 0 == False``), but the bits differ: float types
  never put a zero in the table; a zero is answered by one of two fixed
  instances per type, chosen with ``math.copysign``.
* NaN never equals itself, and payloads differ: a NaN is keyed by
  ``(_NAN, bits)``, a tuple no number can equal.

Distinct keys that pack to the same bits (``Int32(1)`` and
``Int32(2**32 + 1)``; two doubles that round to one binary32) share one
instance: a second map, bits -> instance, interns per (type, bits).

Results the caller cannot corrupt
---------------------------------
``__c_pointers__()`` returns a tuple of one ``PinnedPointer``: a ``c_void_p``
subclass whose ``value`` property refuses assignment and that also refuses
``__init__``, ``__setstate__``, attribute assignment and deletion. The packed
bytes live in an immutable ``bytes`` object that the pointer owns, so they
stay valid for as long as the returned tuple is alive, even after its
instance was evicted and dropped; an evicted slot is never rewritten in
place. The cost is nothing per call.

The alternatives, for comparison:

* the report's suggestion, a cached ``list``: 0 allocations, but
  ``ptrs.append(x)``, ``ptrs[0] = other`` or ``ptrs[0].value = 0`` change what
  every later launch of that value passes to the driver.
* a fresh list around a cached pointer: 1 allocation per call (the list's
  item array; the list object itself comes from the list free list).
* a fresh ``c_void_p`` per call: 1 allocation per call (the ctypes object),
  2 with a fresh list around it.

What no Python-level design stops: writing raw memory through ctypes
(``ctypes.memmove`` to the address, ``ctypes.pointer(p)[0] = ...``,
``from_buffer`` on the pointer) or calling the slot descriptor of ``_owner``
directly. Those are deliberate, not accidents.

Thread safety
-------------
A hit is one ``dict.get`` and one ``bytearray`` item store. Under the GIL each
is atomic. Under free-threading (3.13t) ``dict`` operations are internally
locked, and the byte store is a benign race (a lost update only changes which
key the clock evicts). Everything that changes the table, the ring, the
bits map or the clock hand happens under the cache's ``threading.Lock``,
which a miss takes and then re-checks the table, so two threads missing the
same value build one instance. An instance, its tuple, its pointer and its
bytes are complete before they are published in the table and never change.

Encodings (what the pointer points at; native byte order, which is
little-endian on every platform a CUDA driver runs on)
----------------------------------------------------------------------
* ``Int8`` ... ``Uint64``: the integer modulo 2**N in two's complement, as C
  converts to a fixed-width type. Anything with ``__index__`` is taken as is;
  a float (or other real) is truncated toward zero first, as C's conversion
  to an integer type does, and the result then wraps; NaN raises
  ``ValueError`` and ±inf ``OverflowError`` (as ``int()`` does). C leaves a
  float beyond the integer's range undefined (x86-64 gives the "integer
  indefinite" value, e.g. INT32_MIN); this reference wraps instead.
* ``Boolean``: one byte, 1 if ``v`` is truthy, else 0.
* ``Float64``: IEEE binary64 of ``float(v)``, the bits of the Python float
  unchanged (payloads and -0.0 included). An int too large for a float
  becomes ±inf, which is what correct rounding gives.
* ``Float32``, ``TFloat32``: binary32 of ``float(v)``, round to nearest even,
  computed from the binary64 bits in integer arithmetic. It equals C's
  ``(float)x`` and ``ctypes.c_float`` on x86-64 and AArch64 everywhere, and
  ``struct.pack('<f')`` wherever that does not raise: finite values beyond
  the binary32 range become ±inf (``struct`` raises ``OverflowError``). A
  ``TFloat32`` is passed as a full binary32; the tensor cores, not the
  launch, drop the low 13 mantissa bits.
* ``Float16``: binary16 rounded directly from the binary64 value, round to
  nearest even (no double rounding through binary32), as
  ``struct.pack('<e')`` does; overflow gives ±inf instead of raising.
* ``BFloat16``: the binary32 value first (as above), then its upper 16 bits
  rounded to nearest even on the lower 16; overflow carries into ±inf.
* ints into float types: ``float(v)``, then as above (so a huge int may be
  rounded twice on the way to binary32; ``ctypes.c_float`` does the same).
* NaN into a narrower float (binary32, binary16): sign kept, the top payload
  bits kept, the quiet bit set -- what C's conversion does on x86-64 and
  AArch64. ``BFloat16`` keeps the binary32 NaN's top bits and would set the
  quiet bit if truncation left a zero payload (it cannot: binary32 NaNs here
  are already quiet). ``struct.pack('<e')`` on 3.10 to 3.13 instead writes a
  payload-free NaN; numpy's float16 keeps a signalling NaN signalling. A NaN
  into ``Float64`` is kept bit for bit.

``T(v).value`` is the value the bits stand for (``Int8(300).value == 44``,
``Float32(0.1).value == 0.10000000149011612``), ``T(v).bits`` the bits as an
unsigned int, ``T(v).to_bytes()`` the packed bytes. Instances compare equal
when their type and bits are equal (two NaN instances with one payload are
equal).
"""

from __future__ import annotations

import ctypes
import math
import operator
import struct
import sys
import threading
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

__all__ = [
    "CACHE_CAPACITY",
    "CacheInfo",
    "PinnedPointer",
    "Scalar",
    "cache_info",
    "scalar_types",
]

CACHE_CAPACITY = 4096

_BYTEORDER = sys.byteorder
_EXACT_KEYS = frozenset((int, float, bool))
_NAN = object()  # tag of the tuple keys of NaN values: equal to no number


# ---------------------------------------------------------------------------
# Encoding: pure functions from a Python number to (bits, decoded value).


def _as_int(value: Any) -> int:
    """An integer as C's conversion to an integer type sees it (truncation toward zero)."""
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, float) or hasattr(value, "__trunc__") or hasattr(value, "__float__"):
        return int(value)  # ValueError for NaN, OverflowError for inf
    raise TypeError(f"expected an integer or a real number, got {type(value).__name__}")


def _as_float(value: Any) -> float:
    """``float(value)``, with a value beyond the binary64 range taken as ±inf."""
    if type(value) is float:
        return value
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        # Correct rounding of a finite value beyond the largest double is ±inf.
        return math.inf if value > 0 else -math.inf


def _float64_bits(x: float) -> int:
    return int.from_bytes(struct.pack("<d", x), "little")


def _float64_from_bits(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


def _narrow_float64(bits64: int, exp_bits: int, man_bits: int) -> int:
    """Round binary64 bits to a narrower IEEE format, to nearest even.

    Overflow gives ±inf; tininess gives a subnormal or a signed zero. A NaN
    keeps its sign and the top ``man_bits`` bits of its payload, and gets the
    quiet bit, as C's conversion does on x86-64 and AArch64.
    """
    sign = (bits64 >> 63) << (exp_bits + man_bits)
    exponent = (bits64 >> 52) & 0x7FF
    mantissa = bits64 & ((1 << 52) - 1)
    inf = sign | (((1 << exp_bits) - 1) << man_bits)
    if exponent == 0x7FF:
        if mantissa == 0:
            return inf
        return inf | (mantissa >> (52 - man_bits)) | (1 << (man_bits - 1))
    if exponent == 0 and mantissa == 0:
        return sign
    # The value is sig * 2**exp exactly.
    if exponent == 0:
        sig, exp = mantissa, -1074
    else:
        sig, exp = mantissa | (1 << 52), exponent - 1075
    bias = (1 << (exp_bits - 1)) - 1
    min_exponent = 1 - bias
    leading = sig.bit_length() - 1 + exp  # floor(log2(value))
    quantum = max(leading, min_exponent) - man_bits  # exponent of the result's last bit
    shift = quantum - exp
    if shift <= 0:
        n = sig << -shift
    else:
        n = sig >> shift
        rest = sig & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and n & 1):
            n += 1
    if n >> (man_bits + 1):  # rounding carried into a new binade
        n >>= 1
        quantum += 1
    if n >> man_bits:  # normal
        biased = quantum + man_bits + bias
        if biased >= (1 << exp_bits) - 1:
            return inf
        return sign | (biased << man_bits) | (n & ((1 << man_bits) - 1))
    return sign | n  # subnormal (a carry into the smallest normal lands above)


def _widen_to_float64(bits: int, exp_bits: int, man_bits: int) -> float:
    """The Python float a narrower format's bits stand for (NaN payloads kept)."""
    sign = bits >> (exp_bits + man_bits)
    exponent = (bits >> man_bits) & ((1 << exp_bits) - 1)
    mantissa = bits & ((1 << man_bits) - 1)
    if exponent == (1 << exp_bits) - 1:
        if mantissa == 0:
            return -math.inf if sign else math.inf
        return _float64_from_bits((sign << 63) | (0x7FF << 52) | (mantissa << (52 - man_bits)))
    bias = (1 << (exp_bits - 1)) - 1
    if exponent == 0:
        magnitude = math.ldexp(mantissa, 1 - bias - man_bits)
    else:
        magnitude = math.ldexp(mantissa | (1 << man_bits), exponent - bias - man_bits)
    return -magnitude if sign else magnitude


def _float32_bits(x: float) -> int:
    return _narrow_float64(_float64_bits(x), 8, 23)


def _bfloat16_from_float32_bits(bits32: int) -> int:
    if (bits32 & 0x7F800000) == 0x7F800000 and bits32 & 0x7FFFFF:  # NaN: truncate, stay NaN
        upper = bits32 >> 16
        return upper if upper & 0x7F else upper | 0x40
    # Round to nearest even on the lower 16 bits; a carry out of the largest
    # finite value lands on the infinity of the same sign.
    return (bits32 + 0x7FFF + ((bits32 >> 16) & 1)) >> 16


class _Codec(NamedTuple):
    name: str
    width: int  # bytes
    is_float: bool
    encode: Callable[[Any], Tuple[int, Any]]  # exact key -> (bits, decoded value)


def _integer_codec(name: str, bits: int, signed: bool) -> _Codec:
    mask = (1 << bits) - 1
    sign_bit = 1 << (bits - 1)

    def encode(key: Any) -> Tuple[int, int]:
        unsigned = _as_int(key) & mask
        if signed and unsigned & sign_bit:
            return unsigned, unsigned - (1 << bits)
        return unsigned, unsigned

    return _Codec(name, bits // 8, False, encode)


def _encode_float64(key: Any) -> Tuple[int, float]:
    x = _as_float(key)
    return _float64_bits(x), x


def _encode_float32(key: Any) -> Tuple[int, float]:
    bits = _float32_bits(_as_float(key))
    return bits, _widen_to_float64(bits, 8, 23)


def _encode_float16(key: Any) -> Tuple[int, float]:
    bits = _narrow_float64(_float64_bits(_as_float(key)), 5, 10)
    return bits, _widen_to_float64(bits, 5, 10)


def _encode_bfloat16(key: Any) -> Tuple[int, float]:
    bits = _bfloat16_from_float32_bits(_float32_bits(_as_float(key)))
    return bits, _widen_to_float64(bits, 8, 7)


_CODECS = {
    "Int8": _integer_codec("Int8", 8, True),
    "Int16": _integer_codec("Int16", 16, True),
    "Int32": _integer_codec("Int32", 32, True),
    "Int64": _integer_codec("Int64", 64, True),
    "Uint8": _integer_codec("Uint8", 8, False),
    "Uint16": _integer_codec("Uint16", 16, False),
    "Uint32": _integer_codec("Uint32", 32, False),
    "Uint64": _integer_codec("Uint64", 64, False),
    "Float16": _Codec("Float16", 2, True, _encode_float16),
    "BFloat16": _Codec("BFloat16", 2, True, _encode_bfloat16),
    "TFloat32": _Codec("TFloat32", 4, True, _encode_float32),
    "Float32": _Codec("Float32", 4, True, _encode_float32),
    "Float64": _Codec("Float64", 8, True, _encode_float64),
}


# ---------------------------------------------------------------------------
# The pointer handed to the launch.

_simple_value = ctypes._SimpleCData.value  # the c_void_p getter/setter descriptor
_simple_init = ctypes._SimpleCData.__init__


class PinnedPointer(ctypes.c_void_p):
    """A ``c_void_p`` to packed bytes that it owns and that nobody can re-point.

    ``value`` is read-only; ``__init__``, ``__setstate__``, attribute
    assignment and deletion raise. ``_owner`` (the immutable ``bytes``, or an
    aligned ctypes copy) keeps the pointed-to bytes alive.
    """

    __slots__ = ("_owner",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("PinnedPointer is read-only; scalars build it")

    @property
    def value(self) -> Optional[int]:  # type: ignore[override]
        return _simple_value.__get__(self, type(self))

    @value.setter
    def value(self, new: Any) -> None:
        raise AttributeError("a packed scalar's pointer is read-only")

    def __setattr__(self, name: str, new: Any) -> None:
        raise AttributeError(f"a packed scalar's pointer is read-only (setting {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a packed scalar's pointer is read-only (deleting {name!r})")

    def __setstate__(self, *state: Any) -> None:
        raise TypeError("a packed scalar's pointer cannot be restored in place")

    def __reduce__(self) -> Any:
        raise TypeError("a packed scalar's pointer is an address in this process; pickle the scalar")

    def __repr__(self) -> str:
        return f"PinnedPointer({self.value:#x})"


_set_owner = PinnedPointer.__dict__["_owner"].__set__


def _pin(packed: bytes) -> PinnedPointer:
    """A read-only pointer to (storage holding) ``packed``, owning that storage."""
    owner: Any = packed
    address = ctypes.cast(packed, ctypes.c_void_p).value  # the bytes' own buffer; no copy
    if address is None or address % len(packed):
        # bytes data is 16-byte aligned in CPython's layout today; if that ever
        # changes, copy into an 8-byte aligned ctypes buffer instead.
        owner = (ctypes.c_uint64 * 1).from_buffer_copy(packed.ljust(8, b"\0"))
        address = ctypes.addressof(owner)
    pointer = PinnedPointer.__new__(PinnedPointer)
    _simple_init(pointer, address)
    _set_owner(pointer, owner)
    return pointer


# ---------------------------------------------------------------------------
# The scalar classes and their caches.


class Scalar:
    """Base of the scalar types: immutable, interned, packed once at construction."""

    __slots__ = ("_value", "_bits", "_packed", "_pointers")

    # Per concrete class: the codec, the cache, and the cache's table and
    # clock bits (aliases read by the hot path of __new__).
    _codec: _Codec
    _cache: "_ScalarCache"
    _table: Dict[Any, Tuple["Scalar", int]]
    _recent: bytearray
    width: int

    def __new__(cls, value: Any) -> "Scalar":
        # The hot path: exact int/float/bool keys only (their equality is
        # exact numeric equality). No allocation on a hit.
        if type(value) in _EXACT_KEYS:
            hit = cls._table.get(value)
            if hit is not None:
                cls._recent[hit[1]] = 1
                return hit[0]
        return cls._cache.intern(value)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if cls.__module__ != __name__:
            raise TypeError("the scalar types are final")
        super().__init_subclass__(**kwargs)

    @classmethod
    def _build(cls, bits: int, decoded: Any) -> "Scalar":
        packed = bits.to_bytes(cls._codec.width, _BYTEORDER)
        instance = object.__new__(cls)
        for name, field in (
            ("_value", decoded),
            ("_bits", bits),
            ("_packed", packed),
            ("_pointers", (_pin(packed),)),
        ):
            object.__setattr__(instance, name, field)
        return instance

    def __c_pointers__(self) -> Tuple[PinnedPointer, ...]:
        """One read-only pointer to the packed value; the same tuple every call."""
        return self._pointers

    @property
    def value(self) -> Any:
        return self._value

    @property
    def bits(self) -> int:
        return self._bits

    def to_bytes(self) -> bytes:
        return self._packed

    def __setattr__(self, name: str, new: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._bits == other._bits  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._bits != other._bits  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._bits))

    def __reduce__(self) -> Any:
        return (type(self), (self._value,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value!r})"


class _ScalarCache:
    """The bounded intern table of one scalar type (see the module docstring)."""

    def __init__(self, cls: type, codec: _Codec, capacity: int) -> None:
        self.cls = cls
        self.codec = codec
        self.capacity = capacity
        self.table: Dict[Any, Tuple[Scalar, int]] = {}  # key -> (instance, ring slot)
        self.recent = bytearray(capacity)  # CLOCK bits, one per ring slot
        self.ring: list = []  # slot -> (key, bits)
        self.by_bits: Dict[int, list] = {}  # bits -> [instance, number of keys]
        self.hand = 0
        self.lock = threading.Lock()
        self.zeros: Optional[Tuple[Scalar, Scalar]] = None
        if codec.is_float:
            self.zeros = (cls._build(*codec.encode(0.0)), cls._build(*codec.encode(-0.0)))

    def intern(self, value: Any) -> Scalar:
        """The slow path of ``T(value)``: convert, special keys, then a locked miss."""
        codec = self.codec
        key = value
        if type(key) not in _EXACT_KEYS:
            key = _as_float(key) if codec.is_float else _as_int(key)
        number = key
        if codec.is_float:
            if key == 0:
                assert self.zeros is not None
                return self.zeros[math.copysign(1.0, key) < 0]
            if key != key:
                key = (_NAN, _float64_bits(key))
        hit = self.table.get(key)
        if hit is not None:
            self.recent[hit[1]] = 1
            return hit[0]
        with self.lock:
            hit = self.table.get(key)  # another thread may have added it
            if hit is not None:
                return hit[0]
            bits, decoded = codec.encode(number)
            entry = self.by_bits.get(bits)
            if entry is None:
                entry = [self.cls._build(bits, decoded), 0]
                self.by_bits[bits] = entry
            slot = self._claim_slot()
            entry[1] += 1
            self.ring[slot] = (key, bits)
            self.table[key] = (entry[0], slot)
            return entry[0]

    def _claim_slot(self) -> int:
        """A free ring slot, evicting the first key the clock hand finds unused."""
        if len(self.ring) < self.capacity:
            self.ring.append(None)
            slot = len(self.ring) - 1
            self.recent[slot] = 0
            return slot
        recent, hand = self.recent, self.hand
        while recent[hand]:
            recent[hand] = 0
            hand = (hand + 1) % self.capacity
        old_key, old_bits = self.ring[hand]
        del self.table[old_key]
        entry = self.by_bits[old_bits]
        entry[1] -= 1
        if entry[1] == 0:
            del self.by_bits[old_bits]
        self.hand = (hand + 1) % self.capacity
        return hand


def _make_scalar_type(codec: _Codec, capacity: int) -> type:
    cls = type(
        codec.name,
        (Scalar,),
        {
            "__slots__": (),
            "__module__": __name__,
            "__qualname__": codec.name,
            "__doc__": f"{codec.name}: {codec.width}-byte kernel scalar, packed once and interned.",
            "width": codec.width,
        },
    )
    cls._codec = codec
    cache = _ScalarCache(cls, codec, capacity)
    cls._cache = cache
    cls._table = cache.table
    cls._recent = cache.recent
    return cls


class Boolean(Scalar):
    """Boolean: one byte, 1 for a truthy value and 0 otherwise; two instances in all."""

    __slots__ = ()
    width = 1
    _instances: Tuple["Boolean", "Boolean"]

    def __new__(cls, value: Any) -> "Boolean":
        return cls._instances[1] if value else cls._instances[0]


Boolean._codec = _Codec("Boolean", 1, False, lambda key: (1 if key else 0, bool(key)))
Boolean._instances = (Boolean._build(0, False), Boolean._build(1, True))  # type: ignore[assignment]


_ORDER = (
    "Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64",
    "Boolean", "Float16", "BFloat16", "TFloat32", "Float32", "Float64",
)  # fmt: skip

scalar_types: Dict[str, type] = {
    name: (Boolean if name == "Boolean" else _make_scalar_type(_CODECS[name], CACHE_CAPACITY))
    for name in _ORDER
}

Int8 = scalar_types["Int8"]
Int16 = scalar_types["Int16"]
Int32 = scalar_types["Int32"]
Int64 = scalar_types["Int64"]
Uint8 = scalar_types["Uint8"]
Uint16 = scalar_types["Uint16"]
Uint32 = scalar_types["Uint32"]
Uint64 = scalar_types["Uint64"]
Float16 = scalar_types["Float16"]
BFloat16 = scalar_types["BFloat16"]
TFloat32 = scalar_types["TFloat32"]
Float32 = scalar_types["Float32"]
Float64 = scalar_types["Float64"]

__all__ += list(_ORDER)


class CacheInfo(NamedTuple):
    keys: int  # keys in the table (at most capacity)
    instances: int  # distinct bit patterns held
    capacity: int


def cache_info(scalar_type: type) -> CacheInfo:
    """How full the intern table of one scalar type is (``Boolean`` has none)."""
    cache = getattr(scalar_type, "_cache", None)
    if cache is None:
        return CacheInfo(0, 2, 0)
    with cache.lock:
        return CacheInfo(len(cache.table), len(cache.by_bits), cache.capacity)
