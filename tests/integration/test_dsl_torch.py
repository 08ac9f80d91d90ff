#!/usr/bin/env python3
"""torch 2.15.0 from PyPI through the built-in `torch` target (`bisect --target torch`, no
--package), held to plain-Python oracles run in the same venv (which, as bisect makes it, has no
numpy: torch does not declare it):

- import: a local of the frame that imports torch, alive or not after a full collection (torch
  keeps the `ModuleNotFoundError` of its NumPy start-up, and with it the import's frames);
- decorations: the backends `torch.compile` files in `torch._dynamo.eval_frame.cached_backends`
  per call, and the objects each `torch.jit.script` decoration leaves in cyclic garbage;
- the real launch on the CPU (Inductor's C++ backend, with the machine's g++), against
  tests/gpu/real_launch_count.py; torch's Dynamo runs gc.collect(1) after each compile, which the
  target does before the measurement, so the checks are measured, not `error`.

    test_dsl_torch.py --leakgate BUILD/leakgate
Runs on CPython 3.11 only (one Python keeps CI within its time; the release's wheel and its CUDA
libraries are about 5 GB installed, in bisect's cached venv). Exit 77 (skip) with the reason on
another Python, or when PyPI cannot be reached.
"""

import json
import os
import subprocess
import sys
import unittest

from dsl_release import check_real_launch, gate_release, run_tests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERSION = "2.15.0"
ROW = None

IMPORT_ORACLE = r"""
import gc, json, weakref
class Payload:
    pass
def load():
    payload = Payload()
    import torch
    return weakref.ref(payload)
ref = load()
gc.collect()
print(json.dumps({"alive_after_collection": ref() is not None}))
"""

BACKENDS_ORACLE = r"""
import gc, json
import torch
from torch._dynamo import eval_frame
def f(x):
    return x + 1
before = len(eval_frame.cached_backends)
for _ in range(400):
    torch.compile(f)
gc.collect()
print(json.dumps({"backends_per_compile": (len(eval_frame.cached_backends) - before) / 400}))
"""

# Objects a torch.jit.script decoration leaves in cyclic garbage, per decoration: a new function
# from each of 200 distinct code objects of a module in a file (TorchScript reads the source), as
# the decorations workload makes them, after as many to warm up.
SCRIPT_GARBAGE_ORACLE = r"""
import gc, importlib.util, json, os, tempfile, types, warnings
warnings.simplefilter("ignore")
import torch
N = 200
directory = tempfile.mkdtemp()
path = os.path.join(directory, "oracle_units.py")
with open(path, "w") as out:
    out.write("".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(2 * N)))
spec = importlib.util.spec_from_file_location("oracle_units", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
codes = [getattr(module, f"f{i}").__code__ for i in range(2 * N)]
gc.disable()
def garbage(batch):
    gc.collect()
    for code in batch:
        torch.jit.script(types.FunctionType(code, vars(module)))
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    count = len(gc.garbage)
    gc.garbage.clear()
    gc.set_debug(0)
    return count / len(batch)
garbage(codes[:N])
print(json.dumps({"cyclic_garbage_per_decoration": garbage(codes[N:])}))
"""


def python():
    return ROW["report"]["python"]["executable"]


def oracle(code):
    run = subprocess.run([python(), "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise AssertionError(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def checks():
    return {c["name"]: c["status"] for r in ROW["report"]["results"] if r["role"] == "target" for c in r["checks"]}


def result(workload):
    return next(r for r in ROW["report"]["results"] if r["workload"] == workload and r["role"] == "target")


class Torch(unittest.TestCase):
    def test_the_import_verdict_agrees_with_the_oracle(self):
        answer = oracle(IMPORT_ORACLE)
        self.assertEqual(checks()["import-sentinels"], "fail" if answer["alive_after_collection"] else "pass", answer)
        if answer["alive_after_collection"]:
            reason = next(c["reason"] for c in result("import")["checks"] if c["name"] == "import-sentinels")
            self.assertIn("never-freed", reason)
            self.assertIn("ModuleNotFoundError", reason)

    def test_compile_keeps_its_backend_and_the_check_sees_it(self):
        answer = oracle(BACKENDS_ORACLE)
        cases = {c["form"]: c for c in result("decorations")["details"]["cases"]}
        kept = min(cases["compile"]["runs"]["retained_per_call"])
        if answer["backends_per_compile"] >= 1:
            self.assertIn("decorations-retained", cases["compile"]["flagged"], (answer, kept))
            self.assertGreaterEqual(kept, 1.0)
        else:
            self.assertNotIn("decorations-retained", cases["compile"]["flagged"], (answer, kept))

    def test_script_garbage_per_decoration_agrees_with_the_oracle(self):
        answer = oracle(SCRIPT_GARBAGE_ORACLE)
        cases = {c["form"]: c for c in result("decorations")["details"]["cases"]}
        garbage = min(cases["jit_script"]["runs"]["cyclic_garbage_per_call"])
        self.assertAlmostEqual(garbage, answer["cyclic_garbage_per_decoration"], delta=0.1, msg=answer)
        self.assertEqual("decorations-cyclic-garbage" in cases["jit_script"]["flagged"],
                         answer["cyclic_garbage_per_decoration"] > 0.01, answer)

    def test_real_launch_is_measured_on_the_cpu_and_agrees_with_the_plain_count(self):
        check_real_launch(self, ROW, "lib/data/targets/torch_dsl.py", calls=500)


def main():
    def gate(leakgate):
        global ROW
        ROW = gate_release(leakgate, "torch", VERSION, "import,decorations,launch-real", launch_calls=500,
                           package="torch")
    return run_tests(gate, "one Python keeps CI within its time")


if __name__ == "__main__":
    sys.exit(main())
