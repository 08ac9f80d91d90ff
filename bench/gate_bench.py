#!/usr/bin/env python3
"""Benchmark P3 (docs/notes/performance.md): the whole gate on bundled targets against a bare worker
that only imports the target.

    python3 bench/gate_bench.py --leakgate build/leakgate [--repeat 3]

For each target: the bare worker (`leakgate scan` of a script whose only statement imports the
target: one worker, the embedded interpreter, the import, the result pipe) and the gate, best of
--repeat, each as a ratio to the bare worker. The gate runs with a fixed soak of 2,000 steps and
20,000 distinct values (the defaults, 30 s of soak per target and 10**6 values, are budgets of
the measurement itself, not overhead; their cost is given once, separately). The gate's JSON
says how long each worker measured; what is left of the wall time is the workers' start-up,
imports and serialisation, shown per worker against the bare worker (the gate runs with -j 1 for
this, one worker at a time).

Two rows of issue 20 close it: `leakgate scan` of a one-line script against `python3` running the
same script, in interleaved pairs (--pairs; the ratio pair by pair, median and min-max; goal
1.3x), and the default gate (`leakgate gate` without arguments: the bundled model, every check,
the default budgets), its wall time and the peak resident set of its largest process (goal 60 s
and 1 GiB).

Standard library only; run it with the Python leakgate was built for.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from run_alone import run_alone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SMALL = ["--soak-steps", "2000", "--distinct-values", "20000"]


def timed(command, repeat):
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - started)
    return best


def gate(leakgate, target, extra, repeat):
    """Best wall time, and (workers, seconds measured inside them) of the best run."""
    best = (float("inf"), 0, 0.0)
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "gate.json")
        # One worker at a time: the wall time less the workers' measured seconds is then what the
        # workers cost beyond measuring (with -j N, measured seconds overlap and can exceed it).
        command = [leakgate, "gate", "-j", "1", "--target", target, "--quiet", "--no-color", "--json", out] + extra
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            wall = time.perf_counter() - started
            results = json.load(open(out))["results"]
            if wall < best[0]:
                # A result the gate decided without a worker (launch-path checks of a target with
                # no scalar types) has no seconds.
                workers = sum(1 for result in results if result.get("seconds", 0.0) > 0)
                best = (wall, workers, sum(result.get("seconds", 0.0) for result in results))
    shown = [arg if arg != out else "OUT.json" for arg in command]
    return shown, best


def one_line_script(leakgate, scratch, pairs):
    """`leakgate scan` of a one-line script against python3 running it: the ratio, pair by pair."""
    script = os.path.join(scratch, "one_line.py")
    with open(script, "w") as out:
        out.write("x = [1, 2, 3]\n")
    scan = [leakgate, "scan", "--quiet", "--no-color", "--", script]
    bare = [sys.executable, script]
    ratios = [timed(scan, 1) / timed(bare, 1) for _ in range(pairs)]
    shown = lambda command: " ".join("ONE_LINE.py" if arg == script else arg for arg in command)
    print(f"$ {shown(scan)}   against   $ {shown(bare)}")
    print(f"  scan of a one-line script: {statistics.median(ratios):.2f}x "
          f"({min(ratios):.2f}-{max(ratios):.2f}) python3 running it, {pairs} pairs")


def default_gate(leakgate):
    """The gate without arguments: wall seconds and the largest process's peak RSS."""
    command = [leakgate, "gate", "--quiet", "--no-color"]
    wall, peak = run_alone(command)
    print(f"$ {' '.join(command)}")
    print(f"  default gate (bundled model, every check): {wall:.2f} s, "
          f"peak {peak / 1024:.0f} MiB in its largest process")


def bare_script(scratch, target):
    script = os.path.join(scratch, "import_only.py")
    with open(script, "w") as out:
        if target == "reference":
            out.write(f"import sys\nsys.path.insert(0, {os.path.join(ROOT, 'lib', 'data', 'reference')!r})\n"
                      "import leakgate_reference\n")
        else:
            out.write("import importlib.util\n"
                      f"spec = importlib.util.spec_from_file_location('target', {target!r})\n"
                      "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n")
    return script


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leakgate", default=os.path.join(ROOT, "build", "leakgate"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also the reference gate with its default budgets")
    parser.add_argument("--pairs", type=int, default=30, help="pairs for the one-line script's row")
    args = parser.parse_args()
    targets = ["reference"] + sorted(glob.glob(os.path.join(ROOT, "fixtures", "targets", "*.py")))
    print(f"# P3 whole gate: CPython {sys.version.split()[0]}, {os.cpu_count()} cores, best of {args.repeat}")
    with tempfile.TemporaryDirectory() as scratch:
        python = sys.executable
        floor = timed([python, "-c", "pass"], args.repeat)
        print(f"$ {python} -c pass   {floor * 1e3:.0f} ms (a plain interpreter start)")
        for target in targets:
            name = os.path.basename(target)
            script = bare_script(scratch, target)
            bare_command = [args.leakgate, "scan", "--quiet", "--no-color", "--", script]
            bare = timed(bare_command, args.repeat)
            command, (wall, workers, measured) = gate(args.leakgate, target, SMALL, args.repeat)
            overhead = (wall - measured) / max(1, workers)
            print(f"$ {' '.join(command)}")
            print(f"  {name:<24} gate {wall:6.2f} s = {wall / bare:5.1f}x the bare worker ({bare * 1e3:.0f} ms: "
                  f"`leakgate scan` of `import` only); {workers} workers measured {measured:.2f} s; "
                  f"the rest, {overhead * 1e3:.0f} ms per worker = {overhead / bare:.2f}x a bare worker")
        one_line_script(args.leakgate, scratch, args.pairs)
        default_gate(args.leakgate)
        if args.full:
            command, (wall, workers, measured) = gate(args.leakgate, "reference", [], 1)
            print(f"$ {' '.join(command)}")
            print(f"  reference with the default budgets: {wall:.1f} s, {measured:.1f} s of it measuring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
