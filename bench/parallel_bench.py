#!/usr/bin/env python3
"""Benchmark P3, round 2 (docs/notes/performance.md): `-j N` against `-j 1`, and lint against a bare
parse of the same files, as ratios taken pair by pair (A, B, A, B...: the machine's drift moves
both sides of a pair alike), printed as median and min-max.

    python3 bench/parallel_bench.py --leakgate build/leakgate [--pairs 5] [--soak]

Rows: `gate --checks decorate,import` on the bundled model; `lint` of the top-level modules of the
standard library of the Python it runs with, against `ast.parse` of the same files in one process;
with --soak, `gate --checks soak --soak-seconds 30` on the leaking launch model (about 35 s a pair),
and its peak memory. Wall time, and the CPU time of the children. Standard library only.
"""

import argparse
import glob
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import time

from run_alone import run_alone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARSE = "import ast, sys\nfor f in sys.argv[1:]:\n    try: ast.parse(open(f, 'rb').read(), f)\n    except SyntaxError: pass\n"


def run(command):
    """(wall seconds, children's CPU seconds, peak RSS MiB of the largest child so far)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def peak(command):
    """Peak RSS MiB of the command's largest process, in one run of its own (run()'s figure is the
    largest of every child so far)."""
    return run_alone(command)[1] / 1024


def spread(values, digits=3):
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def shown(command):
    """The command as printed: the file list as the glob it came from."""
    words = [word for word in command if not word.endswith(".py") or "fixtures" in word]
    words = [word if "\n" not in word else "PARSE_EACH_FILE" for word in words]
    if len(words) < len(command):
        words.append(os.path.join(sysconfig.get_paths()["stdlib"], "*.py"))
    return " ".join(words)


def pairs(name, a, b, count):
    rows = []
    for _ in range(count):
        rows.append((run(a), run(b)))
    print(f"\n{name}")
    print(f"  A: {shown(a)}")
    print(f"  B: {shown(b)}")
    print(f"  A wall s {spread([r[0][0] for r in rows])}   B wall s {spread([r[1][0] for r in rows])}")
    print(f"  A cpu s  {spread([r[0][1] for r in rows])}   B cpu s  {spread([r[1][1] for r in rows])}")
    print(f"  A/B wall {spread([r[0][0] / r[1][0] for r in rows], 2)}   over {count} pairs")
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--soak", action="store_true")
    args = parser.parse_args()
    jobs = str(os.cpu_count() or 1)
    leakgate = args.leakgate
    print(f"# -j {jobs} against -j 1; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    gate = [leakgate, "gate", "-q", "--checks", "decorate,import"]
    pairs("gate --checks decorate,import, bundled model", gate + ["-j", jobs], gate + ["-j", "1"],
          args.pairs)
    files = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))
    parse = [sys.executable, "-c", PARSE, *files]
    lint = [leakgate, "lint", "-q"]
    for j in (jobs, "1"):
        rows = pairs(f"lint -j {j} of {len(files)} standard-library modules against ast.parse",
                     lint + ["-j", j, *files], parse, args.pairs)
        share = [r[1][0] / r[0][0] for r in rows]
        print(f"  lint's share of parse speed {spread([100 * s for s in share], 0)} %")
        print(f"  peak RSS of lint's largest process, a run of its own: {peak(lint + ['-j', j, *files]):.0f} MiB")
    if args.soak:
        soak = [leakgate, "gate", "-q", "--target",
                os.path.join(ROOT, "fixtures", "targets", "launch", "uncached_packer.py"), "--checks", "soak"]
        rows = pairs("soak, --soak-seconds 30, leaking launch model", soak + ["-j", jobs], soak + ["-j", "1"],
                     max(2, args.pairs // 2))
        print(f"  peak RSS of the largest worker so far: {rows[-1][1][2]:.0f} MiB")
    print(f"\n# load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
