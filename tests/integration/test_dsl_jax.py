#!/usr/bin/env python3
"""A second real DSL from PyPI: JAX 0.10.2, whose compiled launch runs on the CPU, through
`leakgate bisect --target jax` (no --package: the built-in target knows it), held to plain-Python
oracles run in the same venv: one for decoration (a sentinel in the decorating frame, alive or not
before any collection; frames in the DEBUG_SAVEALL garbage) and tests/gpu/real_launch_count.py for
the real launch.

    test_dsl_jax.py --leakgate BUILD/leakgate
Runs on CPython 3.11 only (JAX 0.10 needs 3.11 or later, and one Python keeps CI within its time).
Exit 77 (skip) with the reason on another Python, or when PyPI cannot be reached.
"""

import json
import os
import subprocess
import sys
import unittest

from dsl_release import check_real_launch, gate_release, run_tests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERSION = "0.10.2"
ROW = None  # the bisect row of VERSION

DECORATION_ORACLE = r"""
import gc, json, sys, weakref
import jax
gc.disable()
class Payload:
    pass
def decorate(options):
    payload = Payload()
    ref = weakref.ref(payload)
    def f(a, b):
        return a + b
    jax.jit(f, **options) if options else jax.jit(f)
    return ref
alive = []
for options in ({}, {"keep_unused": False}):
    ref = decorate(options)
    alive.append(ref() is not None)
gc.set_debug(gc.DEBUG_SAVEALL)
gc.collect()
frames = sum(1 for o in gc.garbage if type(o).__name__ == "frame")
print(json.dumps({"alive_before_collection": alive, "frames_in_garbage": frames}))
"""


class Jax(unittest.TestCase):
    def checks(self):
        return {c["name"]: c["status"] for r in ROW["report"]["results"] if r["role"] == "target"
                for c in r["checks"]}

    def python(self):
        return ROW["report"]["python"]["executable"]

    def test_decoration_verdicts_agree_with_the_oracle(self):
        run = subprocess.run([self.python(), "-c", DECORATION_ORACLE], capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        oracle = json.loads(run.stdout)
        clean = not any(oracle["alive_before_collection"]) and oracle["frames_in_garbage"] == 0
        checks = self.checks()
        for check in ("decorate-sentinels", "decorate-frame-cycle"):
            self.assertEqual(checks[check], "pass" if clean else "fail", (check, oracle))

    def test_real_launch_runs_on_the_cpu_and_agrees_with_the_plain_count(self):
        check_real_launch(self, ROW, "lib/data/targets/jax_dsl.py", blocks_delta=0.1)


def main():
    def gate(leakgate):
        global ROW
        ROW = gate_release(leakgate, "jax", VERSION, "decorate,import,launch-real", package="jax")
    return run_tests(gate, f"JAX {VERSION} needs 3.11+, and one Python keeps CI within its time")


if __name__ == "__main__":
    sys.exit(main())
