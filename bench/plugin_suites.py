"""What `--leakgate` costs on real DSL test suites (issue 44: at most 1.3x the plain run).

    python3 bench/plugin_suites.py --wheel dist/leakgate_dsl-...-cp311-...whl [--pairs N] [SUITE ...]

The suites are tests/suites/suites.py's (pinned subsets of numba-cuda's and Warp's own tests, each
in a venv of its own with the pinned release from PyPI). Per suite: one warm-up of each command
(the DSL's kernel and bytecode caches), then N pairs, `--leakgate` and plain in turn, so that the
machine's drift hits both alike. Prints the wall-clock medians with their spread (min-max), the
ratio pair by pair, and the last runs' pytest summaries: a cheaper run that stopped measuring would
show there ("N measured tests").
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "suites"))
import suites  # noqa: E402


def timed(cmd, env):
    start = time.monotonic()
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=suites.CACHE)
    lines = run.stdout.splitlines()
    summary = [line for line in lines if " in " in line and ("passed" in line or "failed" in line)]
    measured = [line for line in lines if "measured tests" in line]
    return time.monotonic() - start, (summary[-1] if summary else run.stdout[-300:]), (measured[-1] if measured else "")


def spread(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values), max(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the leakgate_dsl wheel for this Python")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("names", nargs="*", default=sorted(suites.SUITES))
    args = parser.parse_args()
    for name in args.names:
        venv_python = suites.prepare(name, args.wheel, args.python)
        env = suites.environment(name)
        plain, measured = suites.command(name, venv_python), suites.command(name, venv_python, "--leakgate")
        timed(plain, env), timed(measured, env)  # warm-up
        walls = {"plain": [], "leakgate": []}
        ratios = []
        for _ in range(args.pairs):
            a, summary_a, leak = timed(measured, env)
            b, summary_b, _ = timed(plain, env)
            walls["leakgate"].append(a)
            walls["plain"].append(b)
            ratios.append(a / b)
        print(f"{name}: {args.pairs} pairs, wall seconds median (min-max)")
        print(f"  plain       {spread(walls['plain'])}   {summary_b}")
        print(f"  --leakgate  {spread(walls['leakgate'])}   {summary_a}")
        print(f"  {leak}")
        print(f"  ratio       {spread(ratios)}x")


if __name__ == "__main__":
    main()
