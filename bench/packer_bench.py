#!/usr/bin/env python3
"""Benchmark P5: the reference packer on a cached value against per-call ctypes construction,
in one process so that the machine's noise cancels in the ratios.

    python3 bench/packer_bench.py            # the build's Python; stdlib only

Prints time per call for each packer and the ratio, for construction and packing (`T(v)
.__c_pointers__()`, as a launch does it) and for packing alone on an existing `T(v)`.
"""

import importlib.util
import os
import platform
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib", "data", "reference"))

import leakgate_reference  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_call(statement, number):
    # Best of 5 repeats: the least disturbed measurement of the same work.
    return min(timeit.repeat(statement, number=number, repeat=5)) / number


def main():
    uncached = load(os.path.join(HERE, "..", "fixtures", "targets", "launch", "uncached_packer.py"))
    number = 20000
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cores; best of 5 x {number} calls")
    print(f"{'type(value)':<18} {'form':<24} {'reference':>12} {'per-call ctypes':>16} {'ratio':>7}")
    for name, value in (("Int32", 7), ("Float32", 1.5), ("Float16", 1.5), ("Float64", -2.25), ("Boolean", True)):
        reference = leakgate_reference.scalar_types[name]
        model = uncached.scalar_types[name]
        existing_reference, existing_model = reference(value), model(value)
        rows = (
            ("T(v).__c_pointers__()", lambda: reference(value).__c_pointers__(), lambda: model(value).__c_pointers__()),
            ("t.__c_pointers__()", existing_reference.__c_pointers__, existing_model.__c_pointers__),
        )
        for form, fast, slow in rows:
            fast_time = per_call(fast, number)
            slow_time = per_call(slow, number)
            print(f"{name + '(' + repr(value) + ')':<18} {form:<24} {fast_time * 1e9:>10.0f}ns {slow_time * 1e9:>14.0f}ns "
                  f"{slow_time / fast_time:>6.1f}x")


if __name__ == "__main__":
    main()
