#!/usr/bin/env python3
"""Benchmark P5 (docs/notes/performance.md): `leakgate lint` of one large generated Python file, against
a bare `ast.parse` of the same file, at doubling sizes.

    python3 bench/lint_bench.py --leakgate build/leakgate [--sizes 1,2,4] [--rounds 3]

Each size (MiB) is a module of many small top-level functions and classes, some of which keep a
caller's frame the ways the rules look for (so the findings grow with the file), and which read
many names they do not bind (module-level definitions and builtins: each is looked up in the
enclosing scopes). Per round and
size, the lint and the parse run one after the other (interleaved pairs: a shared machine's load
falls on both), each in a fresh process. Printed per size: the lint's seconds (median, min to max
over the rounds), the parse's, their ratio, the lint's seconds per MiB, and each one's peak
memory (the largest resident set in its process tree, the lint's worker included). The last line is the cost per MiB of the
largest size over that of the smallest: about 1 when the rules are linear in the file. The rules
before 62122d4 (a set of the module's names made anew per free name: quadratic in a module's
definitions) gave 3.32 s and 8.39 s at 1 and 2 MiB here, 1.27 per MiB; after it 1.70 s and
3.35 s, 0.99.

Standard library only; run it with the Python leakgate was built for.
"""

import argparse
import os
import statistics
import sys
import tempfile

from run_alone import run_alone

UNIT = '''
def helper_{n}(values, scale={n}):
    total = 0
    for value in values:
        if value > scale:
            total += value * scale
        else:
            total -= value
    return total


class Record_{n}:
    def __init__(self, name, size):
        self.name = name
        self.size = size

    def grow(self, extra):
        self.size += extra
        return self.size


def keeps_frame_{n}():
    frame = sys._getframe()
    try:
        return frame.f_code.co_name
    finally:
        del frame


def stores_frame_{n}(fn):
    fn._decorator_frame = sys._getframe(1)
    return fn


def combine_{n}(values):
    record = Record_{n}(str(len(values)), helper_{n}(values))
    return max(values) + min(values) + sum(values) + abs(record.grow(round(float(len(values)))))
'''


def generate(path, mib):
    """A module of about `mib` MiB made of numbered copies of UNIT."""
    with open(path, "w") as out:
        out.write("import sys\n")
        written, n = 0, 0
        while written < mib << 20:
            text = UNIT.format(n=n)
            out.write(text)
            written += len(text)
            n += 1
    return n




def spread(values):
    return f"{statistics.median(values):7.2f} s ({min(values):.2f} to {max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--sizes", default="1,2,4", help="MiB, comma-separated (default 1,2,4)")
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    load = os.getloadavg()[0]
    print(f"# lint of one generated file vs ast.parse of it, {opts.rounds} rounds, load {load:.2f}")
    per_mib = {}
    with tempfile.TemporaryDirectory(prefix="leakgate-lint-bench-") as scratch:
        for mib in sizes:
            path = os.path.join(scratch, f"module_{mib}mib.py")
            units = generate(path, mib)
            lint = [opts.leakgate, "lint", "--quiet", "--json", os.path.join(scratch, "out.json"), path]
            parse = [sys.executable, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", path]
            lints, parses, lint_peak, parse_peak = [], [], 0, 0
            for _ in range(opts.rounds):
                seconds, peak = run_alone(lint)
                lints.append(seconds)
                lint_peak = max(lint_peak, peak)
                seconds, peak = run_alone(parse)
                parses.append(seconds)
                parse_peak = max(parse_peak, peak)
            lint_s, parse_s = statistics.median(lints), statistics.median(parses)
            per_mib[mib] = lint_s / mib
            print(f"{mib:3d} MiB ({units} units): lint {spread(lints)}, parse {spread(parses)}, "
                  f"lint/parse {lint_s / parse_s:5.1f}x, {lint_s / mib:6.2f} s per MiB; peak RSS "
                  f"lint {lint_peak / 1024:.0f} MiB, parse {parse_peak / 1024:.0f} MiB")
    small, large = min(sizes), max(sizes)
    print(f"cost per MiB at {large} MiB over {small} MiB: {per_mib[large] / per_mib[small]:.2f} "
          "(about 1: linear)")


if __name__ == "__main__":
    main()
