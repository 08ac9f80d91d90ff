#!/usr/bin/env python3
"""Where the blocks a decoration keeps were allocated: a plain-Python trace, with nothing but the
standard library, of what the `decorations-retained` check counts.

    retained_sites.py TARGET.py DECORATOR [N] [TOP]

DECORATOR names one of the target's declared decorators (`decorators`), or `kernel`/`jit`; it is
applied bare, or with its options or arguments when it has no bare form. N distinct functions
(default 400), each a new function made from its own code object in a module written to a file (as
the decorations workload makes them), are decorated and dropped under gc.disable() after a
warm-up of the same size, then collected: the blocks still allocated, counted with
sys.getallocatedblocks(). Then N more, traced: tracemalloc's snapshot after their collection is
compared with the one before them. Prints JSON: the blocks kept per decoration, and the TOP (default
12) allocation sites of what is still allocated, each with its blocks per decoration and its
innermost frames. Run it with the interpreter and PYTHONPATH the gate used.
"""

import gc
import importlib.util
import json
import os
import sys
import tempfile
import tracemalloc
import types

from real_launch_count import load  # the target, imported as the gate imports it


def decorator_of(target, name):
    declared = getattr(target, "decorators", None)
    if declared is None:
        return getattr(target, name)
    entry = declared[name]
    forms = entry["forms"]
    if "bare" in forms:
        return entry["decorator"]
    arguments = tuple(entry.get("arguments", ())) if "arguments" in forms else ()
    options = entry.get("options", {})
    return lambda function: entry["decorator"](*arguments, **options)(function)


def units(count):
    directory = tempfile.mkdtemp(prefix="retained-sites-")
    path = os.path.join(directory, "retained_sites_units.py")
    with open(path, "w") as out:
        out.write("".join(f"def unit_{i}():\n    return {i}\n\n\n" for i in range(count)))
    spec = importlib.util.spec_from_file_location("retained_sites_units", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["retained_sites_units"] = module
    spec.loader.exec_module(module)
    functions = [getattr(module, f"unit_{i}") for i in range(count)]
    for function in functions:  # CPython 3.12+ keeps these on the code object at first read
        code = function.__code__
        code.co_code, code.co_varnames, code.co_cellvars, code.co_freevars
    return functions


def main():
    path, name = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    decorate = decorator_of(load(path), name)
    functions = units(3 * count)
    gc.disable()

    def run(batch):
        for function in batch:
            decorate(types.FunctionType(function.__code__, function.__globals__))

    run(functions[:count])  # the warm-up: what the DSL fills once
    gc.collect()
    before_blocks = sys.getallocatedblocks()  # counted without tracemalloc, whose traces are blocks too
    run(functions[count:2 * count])
    gc.collect()
    kept = sys.getallocatedblocks() - before_blocks
    tracemalloc.start(25)
    before = tracemalloc.take_snapshot()
    run(functions[2 * count:])
    gc.collect()
    after = tracemalloc.take_snapshot()
    ignored = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = after.filter_traces(ignored).compare_to(before.filter_traces(ignored), "traceback")
    sites = []
    for stat in sorted(stats, key=lambda s: s.count_diff, reverse=True)[:top]:
        if stat.count_diff <= 0:
            break
        sites.append({"blocks_per_decoration": stat.count_diff / count,
                      "bytes_per_decoration": stat.size_diff / count,
                      "innermost": [f"{frame.filename}:{frame.lineno}" for frame in list(stat.traceback)[-8:][::-1]]})
    print(json.dumps({"python": sys.version.split()[0], "decorator": name, "decorations": count,
                      "blocks_kept_per_decoration": kept / count, "sites": sites}, indent=1))


if __name__ == "__main__":
    main()
