"""Tests for the reference scalar packer and the launch regression models.

Run as ``python tests/python/test_scalars.py`` with any CPython 3.10 to 3.13;
standard library only. The reference package is found through
``lib/data/reference`` relative to this file, the models through
``fixtures/targets/launch``.

What is checked, for ``leakgate_reference.scalars``:

* the packed bytes, for all 14 types, against an oracle written here
  independently of the implementation: ``int.to_bytes`` for integers,
  ``struct`` for binary64 and binary16, ``ctypes.c_float`` (C's conversion)
  for binary32, and the rounding rule spelt out by hand for bfloat16; over
  zeros of both signs, infinities, NaNs with payloads, subnormals, each
  format's extremes, rounding ties and out-of-range integers;
* no allocation per warm call, for ``T(v).__c_pointers__()`` and for
  ``t.__c_pointers__()``: tracemalloc's peak does not rise above where it
  started and ``sys.getallocatedblocks()`` does not move over 100 000 calls
  (both compared with the same measurement of an empty loop);
* bounded memory: 10**6 distinct values leave the live block count flat;
* results the caller cannot corrupt, and bytes that outlive eviction;
* a threading smoke test with evictions racing lookups;

and, for each model in ``fixtures/targets/launch``, that the same
measurements find exactly the reasons its ``# expect:`` line names (so each
of these checks can fail), and the reference none of them.
"""

from __future__ import annotations

import collections
import ctypes
import decimal
import enum
import fractions
import gc
import importlib.util
import itertools
import math
import os
import struct
import subprocess
import sys
import threading
import tracemalloc
import types
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Set, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE_DIR = REPO_ROOT / "lib" / "data" / "reference"
LAUNCH_DIR = REPO_ROOT / "fixtures" / "targets" / "launch"

if str(REFERENCE_DIR) not in sys.path:
    sys.path.insert(0, str(REFERENCE_DIR))

import leakgate_reference as reference  # noqa: E402
from leakgate_reference import scalars  # noqa: E402

TYPE_NAMES = (
    "Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64",
    "Boolean", "Float16", "BFloat16", "TFloat32", "Float32", "Float64",
)  # fmt: skip
INTEGER_BITS = {
    "Int8": (8, True), "Int16": (16, True), "Int32": (32, True), "Int64": (64, True),
    "Uint8": (8, False), "Uint16": (16, False), "Uint32": (32, False), "Uint64": (64, False),
}  # fmt: skip
FLOAT_NAMES = ("Float16", "BFloat16", "TFloat32", "Float32", "Float64")
WIDTH = {
    **{name: bits // 8 for name, (bits, _) in INTEGER_BITS.items()},
    "Boolean": 1, "Float16": 2, "BFloat16": 2, "TFloat32": 4, "Float32": 4, "Float64": 8,
}  # fmt: skip
MODEL_NAMES = ("uncached_packer", "owning_pointer_packer", "naive_cache_packer")
ONE_TIME_BLOCKS = 16  # net blocks over a whole measured run that are not per call
REASONS = {"allocations", "cyclic-garbage", "unbounded", "wrong-bytes"}
TYPICAL = {"Boolean": True, "Int8": 64, "Uint8": 64}  # otherwise 4096 or 0.088388


def typical_value(name: str) -> Any:
    return TYPICAL.get(name, 0.088388 if name in FLOAT_NAMES else 4096)


def load_model(name: str) -> types.ModuleType:
    """A launch model loaded by path, as a fresh module (fresh caches) each time."""
    path = LAUNCH_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_leakgate_launch_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_expectations(name: str) -> Dict[str, str]:
    for line in (LAUNCH_DIR / f"{name}.py").read_text().splitlines():
        if line.startswith("# expect:"):
            return dict(token.split("=", 1) for token in line[len("# expect:") :].split())
    raise AssertionError(f"{name}.py has no '# expect:' line")


def expected_reasons(name: str) -> Set[str]:
    reasons = read_expectations(name).get("reasons", "")
    return set(filter(None, reasons.split(",")))


# ---------------------------------------------------------------------------
# The oracle: what each type must pack, computed without the implementation.


def f64_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def oracle_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def oracle_f32_bits(x: float) -> int:
    # C's (float) conversion: round to nearest even, overflow to inf, NaN
    # quieted with its top payload bits (x86-64, AArch64).
    bits = struct.unpack("<I", bytes(ctypes.c_float(x)))[0]
    if x == x:
        try:
            assert bits == struct.unpack("<I", struct.pack("<f", x))[0]
        except OverflowError:
            assert bits & 0x7FFFFFFF == 0x7F800000
    return bits


def oracle_f16_bits(x: float) -> int:
    if x != x:
        raw = f64_bits(x)
        return ((raw >> 63) << 15) | 0x7C00 | 0x200 | ((raw >> 42) & 0x3FF)
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def oracle_bf16_bits(x: float) -> int:
    bits = oracle_f32_bits(x)
    upper, lower = bits >> 16, bits & 0xFFFF
    if x != x:
        return upper if upper & 0x7F else upper | 0x40
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1
    return upper


def oracle_int(value: Any) -> int:
    try:
        return int(value.__index__())
    except AttributeError:
        return int(value)


def expected_bytes(name: str, value: Any) -> bytes:
    width = WIDTH[name]
    if name in INTEGER_BITS:
        bits = oracle_int(value) % (1 << INTEGER_BITS[name][0])
    elif name == "Boolean":
        bits = 1 if value else 0
    elif name == "Float64":
        bits = f64_bits(oracle_float(value))
    elif name in ("Float32", "TFloat32"):
        bits = oracle_f32_bits(oracle_float(value))
    elif name == "Float16":
        bits = oracle_f16_bits(oracle_float(value))
    else:
        bits = oracle_bf16_bits(oracle_float(value))
    return bits.to_bytes(width, sys.byteorder)


def packed_bytes(pointers: Any, width: int) -> bytes:
    """What the single pointer of a ``__c_pointers__()`` result points at."""
    assert isinstance(pointers, (list, tuple)) and len(pointers) == 1, pointers
    pointer = pointers[0]
    assert isinstance(pointer, ctypes.c_void_p), type(pointer)
    return ctypes.string_at(pointer.value, width)


F32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
F32_MIN_SUB = 2.0**-149
QNAN = float("nan")
NEG_QNAN = -float("nan")
SNAN_LOW = f64_from_bits(0x7FF0000000000001)  # signalling, payload in the low bits only
NAN_PAYLOAD = f64_from_bits(0x7FF4000000000123)
NEG_NAN_PAYLOAD = f64_from_bits(0xFFFABCDEF0123456)
QNAN_LOW_BITS = f64_from_bits(0x7FF80000000ABCDE)

FLOAT_VECTORS = (
    0, 0.0, -0.0, False, True, 1, -1, 0.1, -0.1, 1 / 3, 1.5, -2.5,
    math.inf, -math.inf, QNAN, NEG_QNAN, SNAN_LOW, NAN_PAYLOAD, NEG_NAN_PAYLOAD, QNAN_LOW_BITS,
    5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    -1.7976931348623157e308, 1e300, -1e300, 10**400, -(10**400), 2**1023, 2**1024 - 2**970,
    # binary32: extremes, subnormals, the overflow tie
    F32_MAX, -F32_MAX, F32_MAX + 2.0**103, F32_MAX + 2.0**103 - 2.0**80, 2.0**-126,
    F32_MIN_SUB, 2.0**-150, 1.5 * 2.0**-149, 2.0**-150 + 2.0**-170, 3.4e38, 3.5e38,
    # binary16: extremes, subnormals, the overflow tie, ties to even
    65504.0, -65504.0, 65519.99, 65520.0, -65520.0, 65536.0, 2.0**-14, 2.0**-24, -(2.0**-24),
    2.0**-25, 3 * 2.0**-25, 2.0**-25 + 2.0**-40, 2.0**-26, 6.1e-5,
    1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-40, 2048 + 1.0, 2048 + 3.0,
    # bfloat16: ties to even, and the double rounding through binary32 it is defined by
    1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8 + 2.0**-20,
    3.3895313892515355e38, 3.3961775292304957e38, 3.3961775292304960e38,
    # integers into float types
    2**24 + 1, 2**53 + 1, 2**63, -(2**63), 2**64 - 1, 16777217, 123456789,
)  # fmt: skip

INTEGER_VECTORS = (
    0, -0.0, 0.0, True, False, 1, -1, 2, 127, 128, -128, -129, 255, 256, 300, -300,
    32767, 32768, -32768, -32769, 65535, 65536, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1,
    2**32 - 1, 2**32, 2**32 + 5, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64,
    2**64 + 5, -(2**70) - 1, 10**30, 1.9, -1.9, 2.5, -2.5, 1e300, 4294967296.0,
)  # fmt: skip


def vectors_for(name: str) -> Tuple[Any, ...]:
    if name in INTEGER_BITS:
        bits, signed = INTEGER_BITS[name]
        low = -(1 << (bits - 1)) if signed else 0
        high = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        return INTEGER_VECTORS + (low, high, low - 1, high + 1)
    return FLOAT_VECTORS


class Color(enum.IntEnum):
    RED = 7


# ---------------------------------------------------------------------------
# Measurements, each with the cyclic collector disabled.


def loop_construct_and_pack(scalar_type: type, value: Any, it: Iterable[None]) -> None:
    for _ in it:
        scalar_type(value).__c_pointers__()


def loop_pack(instance: Any, _unused: Any, it: Iterable[None]) -> None:
    for _ in it:
        instance.__c_pointers__()


class Allocation(collections.namedtuple("Allocation", "transient_bytes net_blocks")):
    """tracemalloc peak above the start, and the change of sys.getallocatedblocks()."""


def measure_allocations(loop: Callable[[Any, Any, Iterable[None]], None], subject: Any, value: Any, n: int) -> Allocation:
    """Run ``loop(subject, value, it)`` for n iterations, the iterator made beforehand, gc off.

    ``transient_bytes``: how far tracemalloc's peak rose above the traced size
    that the loop ended with; any allocation the loop made and freed again
    shows here (by its size, not by its count: this detects, it does not
    count). ``net_blocks``: the change of ``sys.getallocatedblocks()``. The
    loop is called with plain positional arguments (no argument tuple to
    allocate), both values are read before the objects that report them
    exist, and the same measurement of an empty loop is subtracted, so a loop
    that allocates nothing reads exactly (0, 0).
    """

    def once(count: int) -> Allocation:
        it = itertools.repeat(None, count)
        tracemalloc.start()
        try:
            blocks_before = sys.getallocatedblocks()
            tracemalloc.reset_peak()
            loop(subject, value, it)
            current, peak = tracemalloc.get_traced_memory()
            blocks_after = sys.getallocatedblocks()
        finally:
            tracemalloc.stop()
        return Allocation(peak - current, blocks_after - blocks_before)

    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        # Warm up: caches, frames, and on 3.10 the per-code-object opcache,
        # which is allocated once a function has been called 1024 times.
        loop(subject, value, itertools.repeat(None, 2000))
        once(0)  # and refill the free lists that the full collection above emptied
        empty = once(0)
        full = once(n)
    finally:
        if was_enabled:
            gc.enable()
    return Allocation(full.transient_bytes - empty.transient_bytes, full.net_blocks - empty.net_blocks)


def cyclic_garbage(loop: Callable[[Any, Any, Iterable[None]], None], subject: Any, value: Any, n: int) -> collections.Counter:
    """Types of what one DEBUG_SAVEALL collection finds after n calls (gc off)."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        loop(subject, value, itertools.repeat(None, n))
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
        finally:
            gc.set_debug(0)
        found = collections.Counter(type(obj).__name__ for obj in gc.garbage)
        gc.garbage.clear()
        return found
    finally:
        if was_enabled:
            gc.enable()


def live_blocks_over_distinct_values(
    scalar_type: type, make: Callable[[int], Any], checkpoints: Tuple[int, ...]
) -> Tuple[List[int], List[int]]:
    """Blocks added at each checkpoint while streaming distinct values (gc off),
    before and after a real collection."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    before: List[int] = []
    after: List[int] = []
    try:
        start = sys.getallocatedblocks()
        done = 0
        for checkpoint in checkpoints:
            for i in range(done, checkpoint):
                scalar_type(make(i)).__c_pointers__()
            done = checkpoint
            before.append(sys.getallocatedblocks() - start)
            gc.collect()
            after.append(sys.getallocatedblocks() - start)
    finally:
        if was_enabled:
            gc.enable()
    return before, after


def distinct_float(i: int) -> float:
    return 1.0 + i * 2.0**-30


def distinct_int(i: int) -> int:
    return 1000 + i


# ---------------------------------------------------------------------------
# The reference: encodings


class ReferenceEncodingTests(unittest.TestCase):
    def test_the_package_exports_all_fourteen_types(self):
        self.assertEqual(tuple(reference.scalar_types), TYPE_NAMES)
        self.assertIs(reference.scalar_types, scalars.scalar_types)
        self.assertIn("scalar_types", reference.__all__)
        for name, scalar_type in reference.scalar_types.items():
            self.assertIsInstance(scalar_type, type)
            self.assertEqual(scalar_type.__name__, name)
            self.assertEqual(scalar_type.width, WIDTH[name])

    def test_every_type_packs_every_vector_byte_exactly(self):
        for name in TYPE_NAMES:
            scalar_type = reference.scalar_types[name]
            for value in vectors_for(name):
                if name in INTEGER_BITS and isinstance(value, float) and not math.isfinite(value):
                    continue
                with self.subTest(type=name, value=value, bits=hex(f64_bits(value)) if isinstance(value, float) else None):
                    expected = expected_bytes(name, value)
                    instance = scalar_type(value)
                    self.assertEqual(packed_bytes(instance.__c_pointers__(), WIDTH[name]), expected)
                    self.assertEqual(instance.to_bytes(), expected)
                    self.assertEqual(instance.bits, int.from_bytes(expected, sys.byteorder))

    def test_random_bit_patterns_match_the_oracle(self):
        import random

        rng = random.Random(20240611)
        patterns = [rng.getrandbits(64) for _ in range(3000)]
        # Bias towards the interesting exponents: near each format's range.
        for exponent in (0, 1, 0x7FF, 0x7FE, 1023 - 14, 1023 - 24, 1023 - 25, 1023 + 15, 1023 - 126, 1023 - 149, 1023 + 127):
            patterns += [(rng.getrandbits(1) << 63) | (exponent << 52) | rng.getrandbits(52) for _ in range(60)]
        for name in FLOAT_NAMES:
            scalar_type = reference.scalar_types[name]
            mismatches = []
            for pattern in patterns:
                x = f64_from_bits(pattern)
                got = packed_bytes(scalar_type(x).__c_pointers__(), WIDTH[name])
                if got != expected_bytes(name, x):
                    mismatches.append((hex(pattern), got.hex(), expected_bytes(name, x).hex()))
            self.assertEqual(mismatches[:5], [], f"{name}: {len(mismatches)} mismatches")

    def test_named_edge_cases(self):
        S = reference.scalar_types
        little = {name: (lambda v, n=name: int.from_bytes(S[n](v).to_bytes(), sys.byteorder)) for name in S}
        # Signed zeros keep their bits.
        self.assertEqual(little["Float32"](-0.0), 0x80000000)
        self.assertEqual(little["Float16"](-0.0), 0x8000)
        self.assertEqual(little["BFloat16"](-0.0), 0x8000)
        self.assertEqual(little["Float64"](-0.0), 1 << 63)
        # Integers wrap as C converts them.
        self.assertEqual(S["Int8"](300).value, 44)
        self.assertEqual(S["Int8"](128).value, -128)
        self.assertEqual(S["Uint32"](-1).value, 2**32 - 1)
        self.assertEqual(S["Int64"](2**63).value, -(2**63))
        self.assertEqual(S["Int32"](-1.9).value, -1)  # truncation toward zero
        # Ties to even.
        self.assertEqual(little["Float16"](1 + 2.0**-11), 0x3C00)
        self.assertEqual(little["Float16"](1 + 3 * 2.0**-11), 0x3C02)
        self.assertEqual(little["Float16"](2.0**-25), 0x0000)
        self.assertEqual(little["Float16"](3 * 2.0**-25), 0x0002)
        self.assertEqual(little["BFloat16"](1 + 2.0**-8), 0x3F80)
        self.assertEqual(little["BFloat16"](1 + 3 * 2.0**-8), 0x3F82)
        self.assertEqual(little["Float32"](1.5 * 2.0**-149), 0x00000002)
        # Float16 rounds from binary64 directly; BFloat16 through binary32.
        self.assertEqual(little["Float16"](1 + 2.0**-11 + 2.0**-40), 0x3C01)
        self.assertEqual(little["BFloat16"](1 + 2.0**-8 + 2.0**-30), 0x3F80)
        # Overflow: ±inf, where struct raises.
        self.assertEqual(little["Float16"](65520.0), 0x7C00)
        self.assertEqual(little["Float16"](-1e300), 0xFC00)
        self.assertEqual(little["Float32"](1e300), 0x7F800000)
        self.assertEqual(little["Float32"](F32_MAX + 2.0**103), 0x7F800000)
        self.assertEqual(little["Float32"](F32_MAX + 2.0**103 - 2.0**80), 0x7F7FFFFF)
        self.assertEqual(little["BFloat16"](F32_MAX), 0x7F80)
        self.assertEqual(little["Float64"](10**400), 0x7FF0000000000000)
        self.assertEqual(little["Float32"](-(10**400)), 0xFF800000)
        # NaN: binary64 bit for bit; narrower: sign, top payload bits, quiet bit.
        self.assertEqual(little["Float64"](NAN_PAYLOAD), 0x7FF4000000000123)
        self.assertEqual(little["Float64"](SNAN_LOW), 0x7FF0000000000001)
        self.assertEqual(little["Float32"](NAN_PAYLOAD), 0x7FE00000)
        self.assertEqual(little["Float32"](SNAN_LOW), 0x7FC00000)
        self.assertEqual(little["Float16"](NAN_PAYLOAD), 0x7F00)
        self.assertEqual(little["Float16"](SNAN_LOW), 0x7E00)
        self.assertEqual(little["BFloat16"](NAN_PAYLOAD), 0x7FE0)
        self.assertEqual(little["Float16"](NEG_NAN_PAYLOAD) >> 15, 1)
        # TFloat32 is passed as a full binary32.
        for value in (0.1, 1 / 3, -2.5, QNAN, 1e-40):
            self.assertEqual(S["TFloat32"](value).to_bytes(), S["Float32"](value).to_bytes())

    def test_bfloat16_keeps_a_nan_whose_payload_truncation_would_empty(self):
        # A signalling binary32 NaN with only low payload bits: truncation would
        # give inf; the quiet bit keeps it a NaN. (Not reachable from a Python
        # float, whose binary32 conversion is already quiet.)
        self.assertEqual(scalars._bfloat16_from_float32_bits(0x7F800001), 0x7FC0)
        self.assertEqual(scalars._bfloat16_from_float32_bits(0xFF800001), 0xFFC0)
        self.assertEqual(scalars._bfloat16_from_float32_bits(0x7FA00000), 0x7FA0)

    def test_out_of_range_and_invalid_inputs(self):
        S = reference.scalar_types
        with self.assertRaises(ValueError):
            S["Int32"](math.nan)
        with self.assertRaises(OverflowError):
            S["Uint8"](math.inf)
        with self.assertRaises(TypeError):
            S["Int32"]("12")
        with self.assertRaises(TypeError):
            S["Float32"]("1.5")
        with self.assertRaises(TypeError):
            S["Float64"](1j)
        self.assertEqual(scalars.cache_info(S["Int32"]).keys, len(S["Int32"]._cache.ring))

    def test_non_exact_number_types_are_converted_first(self):
        S = reference.scalar_types
        self.assertIs(S["Int32"](Color.RED), S["Int32"](7))
        self.assertIs(S["Int16"](fractions.Fraction(7, 2)), S["Int16"](3))
        self.assertEqual(S["Float64"](fractions.Fraction(1, 3)).value, 1 / 3)
        self.assertEqual(S["Float32"](decimal.Decimal("0.1")).to_bytes(), S["Float32"](0.1).to_bytes())
        self.assertEqual(S["Float16"](decimal.Decimal("-0")).bits, 0x8000)
        self.assertEqual(S["Float64"](decimal.Decimal("1e400")).value, math.inf)

    def test_pointers_are_aligned_to_the_width(self):
        for name, scalar_type in reference.scalar_types.items():
            for value in (1, 2, 3, 0.5, 100):
                address = scalar_type(value).__c_pointers__()[0].value
                self.assertEqual(address % WIDTH[name], 0, (name, value, hex(address)))


class ReferenceInterningTests(unittest.TestCase):
    def test_equal_values_give_the_same_instance(self):
        S = reference.scalar_types
        self.assertIs(S["Int32"](4096), S["Int32"](4096))
        self.assertIs(S["Int32"](1), S["Int32"](2**32 + 1))  # same bits: one instance
        self.assertIs(S["Float32"](0.1), S["Float32"](0.10000000000000002))  # one binary32
        self.assertIs(S["Float64"](1), S["Float64"](1.0))
        self.assertIs(S["Boolean"](7), S["Boolean"](True))
        self.assertIs(S["Float32"](-0.0), S["Float32"](-0.0))

    def test_values_with_different_bits_never_share_an_instance(self):
        S = reference.scalar_types
        for name in FLOAT_NAMES:
            with self.subTest(type=name):
                self.assertIsNot(S[name](0.0), S[name](-0.0))
                self.assertIsNot(S[name](0), S[name](-0.0))
                self.assertIsNot(S[name](False), S[name](-0.0))
                self.assertEqual(S[name](0).bits, 0)
        self.assertNotEqual(S["Float64"](NAN_PAYLOAD).bits, S["Float64"](QNAN).bits)
        self.assertIsNot(S["Float64"](NAN_PAYLOAD), S["Float64"](QNAN))
        # A NaN payload is found by its bits, whichever float object carries it.
        again = f64_from_bits(0x7FF4000000000123)
        self.assertIsNot(again, NAN_PAYLOAD)
        self.assertIs(S["Float64"](again), S["Float64"](NAN_PAYLOAD))

    def test_instances_are_immutable(self):
        instance = reference.scalar_types["Int32"](5)
        for attribute in ("_value", "_bits", "_pointers", "value", "other"):
            with self.assertRaises(AttributeError):
                setattr(instance, attribute, 1)
        with self.assertRaises(AttributeError):
            del instance._value
        self.assertFalse(hasattr(instance, "__dict__"))
        with self.assertRaises(TypeError):

            class Sub(reference.scalar_types["Int32"]):  # noqa: F841
                pass

    def test_equality_and_hash_follow_type_and_bits(self):
        S = reference.scalar_types
        self.assertEqual(S["Int8"](1), S["Int8"](257))
        self.assertNotEqual(S["Int8"](1), S["Uint8"](1))
        self.assertEqual(hash(S["Int8"](1)), hash(S["Int8"](257)))
        self.assertEqual(S["Float32"](QNAN), S["Float32"](QNAN))  # same bits


# ---------------------------------------------------------------------------
# The reference: costs, bounds, corruption, threads


class ReferenceAllocationTests(unittest.TestCase):
    N = 100_000

    def assert_no_allocation(self, loop, subject, value, label):
        result = measure_allocations(loop, subject, value, self.N)
        self.assertEqual(result, Allocation(0, 0), f"{label}: {result} over {self.N} calls")

    def test_construct_and_pack_allocates_nothing_once_warm(self):
        for name, scalar_type in reference.scalar_types.items():
            values = [typical_value(name), 1, 0]
            if name in FLOAT_NAMES:
                values += [-0.0, 0.0, math.inf, 1e300]
            for value in values:
                with self.subTest(type=name, value=value):
                    self.assert_no_allocation(loop_construct_and_pack, scalar_type, value, f"{name}({value!r})")

    def test_packing_an_existing_instance_allocates_nothing(self):
        for name, scalar_type in reference.scalar_types.items():
            with self.subTest(type=name):
                instance = scalar_type(typical_value(name))
                self.assert_no_allocation(loop_pack, instance, None, f"{name}.__c_pointers__")

    def test_a_nan_may_allocate_but_does_not_grow(self):
        result = measure_allocations(loop_construct_and_pack, reference.scalar_types["Float32"], NAN_PAYLOAD, 20_000)
        self.assertLessEqual(result.net_blocks, 0, result)  # it may cost transient allocations, no more

    def test_no_cyclic_garbage(self):
        for name, scalar_type in reference.scalar_types.items():
            with self.subTest(type=name):
                self.assertEqual(cyclic_garbage(loop_construct_and_pack, scalar_type, typical_value(name), 2000), {})
        # Misses (construction of new entries, evictions) make none either.
        float64 = reference.scalar_types["Float64"]

        def misses(_scalar_type, _value, it):
            for i, _ in enumerate(it):
                float64(distinct_float(i + 10**7)).__c_pointers__()

        self.assertEqual(cyclic_garbage(misses, None, None, scalars.CACHE_CAPACITY + 2000), {})


class ReferenceBoundTests(unittest.TestCase):
    def test_a_million_distinct_values_plateau(self):
        int64 = reference.scalar_types["Int64"]
        checkpoints = (200_000, 400_000, 600_000, 800_000, 1_000_000)
        before, after = live_blocks_over_distinct_values(int64, lambda i: 10**9 + i, checkpoints)
        self.assertEqual(scalars.cache_info(int64).keys, scalars.CACHE_CAPACITY)
        # Past the capacity, nothing is added: allow a few blocks of noise.
        self.assertLess(max(before) - min(before), 50, before)
        self.assertLess(max(after) - min(after), 50, after)

    def test_distinct_nan_payloads_plateau(self):
        float32 = reference.scalar_types["Float32"]
        checkpoints = (10_000, 20_000, 30_000)
        before, _ = live_blocks_over_distinct_values(
            float32, lambda i: f64_from_bits(0x7FF8000000000000 | (i << 29)), checkpoints
        )
        self.assertLess(max(before) - min(before), 50, before)
        self.assertLessEqual(scalars.cache_info(float32).keys, scalars.CACHE_CAPACITY)

    def test_a_hot_value_survives_a_stream_of_one_off_values(self):
        int32 = reference.scalar_types["Int32"]
        hot = int32(123456)
        for i in range(3 * scalars.CACHE_CAPACITY):
            int32(7_000_000 + i)
            if i % 100 == 0:
                self.assertIs(int32(123456), hot)  # a hit sets its clock bit
        self.assertIs(int32(123456), hot)


class ReferenceCorruptionTests(unittest.TestCase):
    def test_the_result_cannot_be_changed_through_python(self):
        float32 = reference.scalar_types["Float32"]
        pointers = float32(2.5).__c_pointers__()
        address = pointers[0].value
        self.assertIsInstance(pointers, tuple)
        self.assertIsInstance(pointers[0], ctypes.c_void_p)
        with self.assertRaises(AttributeError):
            pointers[0].value = 0
        with self.assertRaises(AttributeError):
            pointers[0]._owner = None
        with self.assertRaises(AttributeError):
            del pointers[0]._owner
        with self.assertRaises(TypeError):
            pointers[0].__init__(0)
        with self.assertRaises(TypeError):
            pointers[0].__setstate__({}, b"\0" * 8)
        with self.assertRaises(TypeError):
            pointers[0] = ctypes.c_void_p(0)  # type: ignore[index]
        with self.assertRaises(AttributeError):
            pointers.append(ctypes.c_void_p(0))  # type: ignore[attr-defined]
        with self.assertRaises(TypeError):
            scalars.PinnedPointer(address)
        again = float32(2.5).__c_pointers__()
        self.assertIs(again, pointers)
        self.assertEqual(again[0].value, address)
        self.assertEqual(packed_bytes(again, 4), struct.pack("=f", 2.5))

    def test_the_bytes_outlive_eviction_of_their_instance(self):
        int64 = reference.scalar_types["Int64"]
        pointers = int64(-123456789012).__c_pointers__()
        for i in range(2 * scalars.CACHE_CAPACITY + 10):
            int64(5 * 10**12 + i)  # evicts -123456789012 (its clock bit is clear)
        fresh = int64(-123456789012)
        self.assertIsNot(fresh.__c_pointers__(), pointers)
        # Only the tuple refers to the old pointer now; its bytes are intact.
        self.assertEqual(packed_bytes(pointers, 8), (-123456789012).to_bytes(8, sys.byteorder, signed=True))


class ReferenceThreadTests(unittest.TestCase):
    def test_threads_racing_lookups_and_evictions_get_right_bytes(self):
        uint32 = reference.scalar_types["Uint32"]
        errors: List[str] = []
        start = threading.Barrier(8)

        def worker(seed: int) -> None:
            start.wait()
            try:
                for round_ in range(4):
                    for i in range(seed * 1000, seed * 1000 + 3000):  # overlapping ranges
                        value = i * 2654435761
                        ptrs = uint32(value).__c_pointers__()
                        if packed_bytes(ptrs, 4) != (value % 2**32).to_bytes(4, sys.byteorder):
                            errors.append(f"{value}: {packed_bytes(ptrs, 4).hex()}")
                            return
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(repr(exc))

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(interval)
        self.assertEqual(errors, [])
        cache = uint32._cache
        with cache.lock:  # the invariants of the table, the ring and the bits map
            self.assertEqual(len(cache.table), len(cache.ring))
            self.assertLessEqual(len(cache.ring), cache.capacity)
            for slot, (key, bits) in enumerate(cache.ring):
                instance, table_slot = cache.table[key]
                self.assertEqual(table_slot, slot)
                self.assertEqual(instance.bits, bits)
                self.assertIs(cache.by_bits[bits][0], instance)
            self.assertEqual(sum(count for _, count in cache.by_bits.values()), len(cache.table))


class ReferenceImportTests(unittest.TestCase):
    def test_the_scalars_module_loads_on_first_use_of_scalar_types(self):
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); import leakgate_reference as r; "
            "assert 'leakgate_reference.scalars' not in sys.modules; "
            "t = r.scalar_types; assert 'leakgate_reference.scalars' in sys.modules; "
            "assert len(t) == 14; print('ok')"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, str(REFERENCE_DIR)], capture_output=True, text=True, timeout=60
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "ok")


# ---------------------------------------------------------------------------
# The reasons each target really has, found by the measurements above.


def observed_reasons(target: Any) -> Tuple[Set[str], Dict[str, Any]]:
    """Measure a target the way the expect lines are meant and name what applies.

    allocations: a warm ``T(v).__c_pointers__()`` raises tracemalloc's peak
    for some type (the reference never does). cyclic-garbage: a DEBUG_SAVEALL
    collection after warm calls finds objects. unbounded: memory that stays
    reachable after a real collection grows with the number of distinct
    values. wrong-bytes: some vector packs other bytes than the oracle's.
    """
    found: Set[str] = set()
    facts: Dict[str, Any] = {}
    types_ = target.scalar_types
    for name in ("Int32", "Float32", "Float16", "Boolean"):
        scalar_type, value = types_[name], typical_value(name)
        combined = measure_allocations(loop_construct_and_pack, scalar_type, value, 20_000)
        alone = measure_allocations(loop_pack, scalar_type(value), None, 20_000)
        garbage = cyclic_garbage(loop_construct_and_pack, scalar_type, value, 1000)
        facts[name] = (combined, alone, garbage)
        # Net blocks: allow one-time effects (a free list filling up).
        if combined.transient_bytes > 0 or combined.net_blocks > ONE_TIME_BLOCKS:
            found.add("allocations")
        if garbage:
            found.add("cyclic-garbage")
    for name, make in (("Int64", distinct_int), ("Float64", distinct_float)):
        _, after = live_blocks_over_distinct_values(types_[name], lambda i, m=make: m(i + 5 * 10**6), (10_000, 20_000))
        facts[f"{name} live blocks"] = after
        if after[1] - after[0] > 1000:
            found.add("unbounded")
    wrong = []
    for name in TYPE_NAMES:
        for value in vectors_for(name):
            if name in INTEGER_BITS and isinstance(value, float) and not math.isfinite(value):
                continue
            if packed_bytes(types_[name](value).__c_pointers__(), WIDTH[name]) != expected_bytes(name, value):
                wrong.append((name, value))
    facts["wrong"] = wrong
    if wrong:
        found.add("wrong-bytes")
    return found, facts


class ReasonTests(unittest.TestCase):
    def test_the_reference_has_no_reason(self):
        found, facts = observed_reasons(reference)
        self.assertEqual(found, set(), facts)

    def test_each_model_has_exactly_the_reasons_its_expect_line_names(self):
        for name in MODEL_NAMES:
            with self.subTest(model=name):
                expect = read_expectations(name)
                self.assertEqual(expect.get("exit"), "1")
                self.assertLessEqual(expected_reasons(name), REASONS)
                found, facts = observed_reasons(load_model(name))
                self.assertEqual(found, expected_reasons(name), facts)


class ModelTests(unittest.TestCase):
    """The per-model facts stated in the docstrings."""

    def test_every_model_is_a_launch_target(self):
        for name in MODEL_NAMES:
            with self.subTest(model=name):
                model = load_model(name)
                self.assertEqual(model.TARGET_NAME, name)
                self.assertEqual(tuple(model.scalar_types), TYPE_NAMES)

                def user_kernel():
                    return 3

                self.assertIs(model.kernel(user_kernel), user_kernel)
                self.assertIs(model.jit(**model.jit_options)(user_kernel), user_kernel)
                self.assertIs(model.kernel(**model.kernel_options)(user_kernel), user_kernel)
                for type_name, scalar_type in model.scalar_types.items():
                    pointers = scalar_type(typical_value(type_name)).__c_pointers__()
                    self.assertIsInstance(pointers, list)
                    self.assertIsInstance(pointers[0], ctypes.c_void_p)

    def test_uncached_packer_makes_three_objects_of_cyclic_garbage_per_call(self):
        model = load_model("uncached_packer")
        n = 1000
        for type_name, ctype_name in (("Int32", "c_int"), ("Float64", "c_double"), ("Float16", "c_ushort")):
            with self.subTest(type=type_name):
                found = cyclic_garbage(loop_construct_and_pack, model.scalar_types[type_name], 1, n)
                self.assertEqual(found, {ctype_name: n, f"LP_{ctype_name}": n, "dict": n})

    def test_it_is_the_cast_that_makes_the_cycle(self):
        def pointer_only(_a, _b, it):
            for _ in it:
                [ctypes.pointer(ctypes.c_int32(5))]

        def pointer_and_cast(_a, _b, it):
            for _ in it:
                [ctypes.cast(ctypes.pointer(ctypes.c_int32(5)), ctypes.c_void_p)]

        self.assertEqual(cyclic_garbage(pointer_only, None, None, 500), {})
        self.assertEqual(cyclic_garbage(pointer_and_cast, None, None, 500), {"c_int": 500, "LP_c_int": 500, "dict": 500})
        source = ctypes.pointer(ctypes.c_int32(5))
        result = ctypes.cast(source, ctypes.c_void_p)
        self.assertIs(result._objects, source._objects)
        self.assertIs(source._objects[id(source)], source)  # the cycle

    def test_uncached_packer_grows_until_a_collection(self):
        model = load_model("uncached_packer")
        before, after = live_blocks_over_distinct_values(model.scalar_types["Int64"], distinct_int, (5_000, 10_000))
        self.assertGreaterEqual(before[1] - after[0], 3 * 5_000)  # garbage piles up between collections
        self.assertLess(abs(after[1] - after[0]), 50)  # and none of it stays reachable

    def test_owning_pointer_packer_allocates_but_keeps_nothing(self):
        model = load_model("owning_pointer_packer")
        int32 = model.scalar_types["Int32"]
        combined = measure_allocations(loop_construct_and_pack, int32, 4096, 20_000)
        alone = measure_allocations(loop_pack, int32(4096), None, 20_000)
        self.assertGreater(combined.transient_bytes, 0)
        self.assertGreater(alone.transient_bytes, 0)
        self.assertLessEqual(combined.net_blocks, ONE_TIME_BLOCKS)  # not per call
        self.assertEqual(cyclic_garbage(loop_construct_and_pack, int32, 4096, 1000), {})
        pointers = int32(77).__c_pointers__()
        self.assertIsNot(pointers, int32(77).__c_pointers__())
        self.assertEqual(packed_bytes(pointers, 4), (77).to_bytes(4, sys.byteorder))

    def test_naive_cache_packer_answers_minus_zero_from_the_zero_slot(self):
        model = load_model("naive_cache_packer")
        float32 = model.scalar_types["Float32"]
        self.assertEqual(packed_bytes(float32(0.0).__c_pointers__(), 4), b"\0\0\0\0")
        self.assertEqual(packed_bytes(float32(-0.0).__c_pointers__(), 4), b"\0\0\0\0")  # should be -0.0
        other = load_model("naive_cache_packer").scalar_types["Float64"]
        self.assertEqual(packed_bytes(other(-0.0).__c_pointers__(), 8), struct.pack("=d", -0.0))
        self.assertEqual(packed_bytes(other(0.0).__c_pointers__(), 8), struct.pack("=d", -0.0))  # should be +0.0

    def test_naive_cache_packer_allocates_only_for_the_instance(self):
        model = load_model("naive_cache_packer")
        int32 = model.scalar_types["Int32"]
        combined = measure_allocations(loop_construct_and_pack, int32, 4096, 20_000)
        alone = measure_allocations(loop_pack, int32(4096), None, 20_000)
        self.assertGreater(combined.transient_bytes, 0)
        self.assertEqual(alone, Allocation(0, 0))

    def test_naive_cache_packer_grows_with_distinct_values_and_each_nan(self):
        model = load_model("naive_cache_packer")
        _, after = live_blocks_over_distinct_values(model.scalar_types["Int64"], distinct_int, (5_000, 10_000))
        self.assertGreaterEqual(after[1] - after[0], 5 * 5_000)
        float32 = model.scalar_types["Float32"]
        before_nans = len(float32._cache)
        for _ in range(1000):
            float32(float("nan")).__c_pointers__()  # one value, a new key every call
        self.assertEqual(len(float32._cache) - before_nans, 1000)

    def test_naive_cache_packer_hands_out_its_cache_for_corruption(self):
        model = load_model("naive_cache_packer")
        int32 = model.scalar_types["Int32"]
        first = int32(9).__c_pointers__()
        first[0] = ctypes.c_void_p(0)  # a caller's harmless-looking reuse of the list
        self.assertEqual(int32(9).__c_pointers__()[0].value, None)  # the next launch passes NULL


if __name__ == "__main__":
    unittest.main()
