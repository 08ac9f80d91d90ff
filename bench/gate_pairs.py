#!/usr/bin/env python3
"""The gate against a bare import of the DSL, two leakgate builds interleaved (issue 20's P3 row).

    bench/gate_pairs.py --venv VENV [--before BUILD_A/leakgate] --after BUILD_B/leakgate [--rounds N]
                        [--import cutlass.cute] [--target cute] [--checks decorate,import]

Each round runs, in turn, `VENV/bin/python -c 'import MODULE'`, then `leakgate gate -q -j 2
--target TARGET --python VENV/bin/python --checks CHECKS` of each build, timed from outside (wall).
Prints each build's median and its ratio to the same round's bare import (median, min-max), the
after/before ratio pair by pair (with --before), and the load average: ratios taken in one round
are what compare on a shared machine. Without --before, only the --after build is timed (issue
20's row: the gate against the bare import, goal 1.5x).
"""

import argparse
import os
import statistics
import subprocess
import time


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", required=True)
    parser.add_argument("--before", help="a leakgate binary (optional)")
    parser.add_argument("--after", required=True, help="another leakgate binary")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--import", dest="module", default="cutlass.cute")
    parser.add_argument("--target", default="cute")
    parser.add_argument("--checks", default="decorate,import")
    args = parser.parse_args()
    python = os.path.join(args.venv, "bin", "python")
    commands = {"bare": [python, "-c", f"import {args.module}"]}
    builds = ("before", "after") if args.before else ("after",)
    for name in builds:
        commands[name] = [getattr(args, name), "gate", "-q", "-j", "2", "--target", args.target,
                          "--python", python, "--checks", args.checks]
    times = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            times[name].append(timed(command))
    print(f"bare import: median {statistics.median(times['bare']):.3f} s over {args.rounds} rounds")
    for name in builds:
        ratios = [gate / bare for gate, bare in zip(times[name], times["bare"])]
        print(f"{name}: median {statistics.median(times[name]):.3f} s; against the bare import {spread(ratios)}")
    if args.before:
        pairs = [after / before for after, before in zip(times["after"], times["before"])]
        print(f"after/before, pair by pair: {spread(pairs)}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
