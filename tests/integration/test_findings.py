#!/usr/bin/env python3
"""The write-ups of docs/findings, checked on the CPU: `docs/findings/regenerate.py --check` runs
each reproducer in the release it names and must see it exit as its write-up says (1 on the
leaking release, 0 on a fixed one), and each leakgate command of a write-up that is cheap to run
(a scan without --trace-sites, a lint) must exit with its status and print its finding.

    test_findings.py --leakgate BUILD/leakgate

The venvs are those the `dsl` tests make through `leakgate bisect` (Warp 1.19.0, numba-cuda
0.30.4, Taichi 1.7.4, nvidia-cutlass-dsl 4.6.1 and 4.6.3); one not cached is made the same way.
Runs on CPython 3.11 only (the venvs of the other tests are 3.11's). Exit 77 (skip) with the
reason without the binary, on another Python, or when PyPI cannot serve a release.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    leakgate = sys.argv[sys.argv.index("--leakgate") + 1]
    if not os.access(leakgate, os.X_OK):
        print("skip: no leakgate binary")
        return 77
    if sys.version_info[:2] != (3, 11):
        print(f"skip: runs on CPython 3.11 only (this is {sys.version.split()[0]}): the releases' venvs "
              "are the 3.11 ones the dsl tests make")
        return 77
    return subprocess.run([sys.executable, os.path.join(ROOT, "docs", "findings", "regenerate.py"),
                           "--leakgate", leakgate, "--check"]).returncode


if __name__ == "__main__":
    sys.exit(main())
