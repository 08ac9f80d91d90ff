#!/usr/bin/env python3
"""Two leakgate builds scanning the same garbage heap, whole processes, in interleaved pairs: the
figure issue 41 bounds (a scan of the 1e6-object heap within 1.2x of the scan before its work).

    bench/scan_pairs.py --before OLD/leakgate --after NEW/leakgate [--objects 1e6] [--pairs 10]

The script scanned leaves about --objects objects of cyclic garbage (bench/garbage_heap.py, the
P1 heap: frame cycles of a decorator among ordinary cycles) and nothing else. Each pair runs the
two builds one after the other, the order alternating, so that the machine's load falls on both
alike. Prints each pair, then the median of after/before wall time with its range, and each build's
median peak RSS (the process tree's largest, from wait4). Both builds must embed the same CPython.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The units are counted before (garbage_heap.calibrate collects, which the scanned script must not:
# a build from before issue 41 refuses to measure a program that collects).
SCRIPT = """\
import sys
sys.path.insert(0, {here!r})
import garbage_heap
garbage_heap.build_units({units})
"""


def run(leakgate, script):
    """Wall seconds and peak RSS (KiB) of one `leakgate scan`, and its exit code."""
    started = time.monotonic()
    process = subprocess.Popen([leakgate, "scan", "--quiet", "--", script], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - started, usage.ru_maxrss, process.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--objects", type=float, default=1e6)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--python", default=sys.executable,
                        help="an interpreter of the version the builds embed, to count objects per unit")
    options = parser.parse_args()
    per_unit = float(subprocess.run(
        [options.python, "-c", f"import sys; sys.path.insert(0, {HERE!r}); import garbage_heap; "
                               "print(garbage_heap.calibrate())"],
        capture_output=True, text=True, check=True).stdout)
    units = max(1, round(options.objects / per_unit))
    with tempfile.TemporaryDirectory(prefix="leakgate-scan-pairs-") as tmp:
        script = os.path.join(tmp, "heap.py")
        with open(script, "w") as out:
            out.write(SCRIPT.format(here=HERE, units=units))
        ratios, rss = [], {"before": [], "after": []}
        for pair in range(options.pairs):
            order = ["before", "after"] if pair % 2 == 0 else ["after", "before"]
            got = {}
            for which in order:
                seconds, peak, code = run(getattr(options, which), script)
                if code not in (0, 1):
                    sys.exit(f"{which}: exit {code} on the heap")
                got[which] = seconds
                rss[which].append(peak)
            ratios.append(got["after"] / got["before"])
            print(f"pair {pair + 1}: before {got['before']:.2f} s, after {got['after']:.2f} s, "
                  f"after/before {ratios[-1]:.3f}", flush=True)
    print(f"after/before wall time: median {statistics.median(ratios):.3f} "
          f"({min(ratios):.3f}-{max(ratios):.3f}), {options.pairs} pairs, "
          f"{units} units of {per_unit:.0f} objects")
    for which in ("before", "after"):
        print(f"peak RSS {which}: median {statistics.median(rss[which]) / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
