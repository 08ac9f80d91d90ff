#!/usr/bin/env python3
"""`leakgate gate -j N`: workers run at the same time give the verdicts and figures of the run
one after another (-j 1), in the same report order, on the bundled models.

    test_parallel_gate.py --leakgate BUILD/leakgate
Each worker measures only its own process (allocator counters, sentinels, RSS): what runs beside
it must change no status and no count. Two figures vary from run to run whatever -j is, and are
compared within that variation: the soak's slope (RSS sampled in time; only its status is
compared), values-bounded's kept blocks (90,004 to 90,006 over five -j 1 runs of the naive
cache model: the allocator's own blocks come and go), within a thousandth, and
decorations-retained's lowest run (0 on a quiet machine; 10 thousandths of a block per
decoration, 4 blocks in each run of 400, in one CI run beside the suite's other gates: every
process nets its own -7 to +7 blocks per run), within 25 thousandths: half the check's
0.05-per-decoration rule, so a verdict can still not move.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

LEAKGATE = None
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TARGETS = os.path.join(ROOT, "fixtures", "targets")
PYTHON_PROBE = os.path.join(ROOT, "examples", "probes", "decorated_functions_freed.py")
SHORT_LAUNCH = ["--launch-calls", "200", "--launch-runs", "5", "--distinct-values", "20000",
                "--soak-steps", "3000"]


def gate(jobs, target, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gate.json")
        run = subprocess.run([LEAKGATE, "gate", "--quiet", "-j", str(jobs), "--target", target,
                              "--json", out, *args], capture_output=True, text=True, timeout=600)
        if run.returncode not in (0, 1, 3):
            raise AssertionError(f"gate -j {jobs} exited {run.returncode}: {run.stderr}")
        with open(out) as handle:
            return run.returncode, json.load(handle)


# Check -> how far its amount may move between two runs of the same -j, as (share of the larger
# amount, amount): the larger of the two bounds (None: not compared).
VARYING = {"soak-growth": None, "values-bounded": (1e-3, 0), "decorations-retained": (0, 25)}


def verdicts(report, varying=VARYING):
    """(workload, role, subject, [(check, status, amount)]) per result, in report order; the
    amounts of `varying` checks are left out (compared by `amounts`)."""
    rows = []
    for result in report["results"]:
        checks = []
        for check in result["checks"]:
            amount = None if check["name"] in varying else check.get("amount")
            checks.append((check["name"], check["status"], amount))
        rows.append((result["workload"], result.get("role"), result["subject"], checks))
    return rows


def amounts(report, varying=VARYING):
    return [(result["workload"], result.get("role"), check["name"], check.get("amount"))
            for result in report["results"] for check in result["checks"]
            if varying.get(check["name"]) is not None]


def assert_amounts_close(test, one_report, other_report, varying=VARYING):
    """The `varying` checks' amounts of two reports, each within its bound of the other."""
    for (*where, one), (*_, other) in zip(amounts(one_report, varying), amounts(other_report, varying)):
        share, absolute = varying[where[2]]
        tolerance = max(share * max(abs(one or 0), abs(other or 0)), absolute)
        test.assertLessEqual(abs((one or 0) - (other or 0)), tolerance, msg=f"{where}: {one} vs {other}")


class ParallelGate(unittest.TestCase):
    def same(self, target, *args):
        code1, sequential = gate(1, target, *args)
        code4, parallel = gate(4, target, *args)
        self.assertEqual(code1, code4)
        self.assertEqual(verdicts(sequential), verdicts(parallel))
        assert_amounts_close(self, sequential, parallel)
        self.assertGreater(len(sequential["results"]), 1)
        return sequential

    def test_the_bundled_frame_cycle_model(self):
        report = self.same(os.path.join(TARGETS, "frame_cycle_461.py"))
        statuses = {c["name"]: c["status"] for r in report["results"] if r.get("role") == "target"
                    for c in r["checks"]}
        self.assertEqual(statuses["decorate-frame-cycle"], "fail")

    def test_the_launch_path_models(self):
        for name in ("uncached_packer", "naive_cache_packer", "owning_pointer_packer"):
            with self.subTest(name):
                self.same(os.path.join(TARGETS, "launch", name + ".py"), *SHORT_LAUNCH)

    def test_a_target_without_scalar_types_skips_the_launch_path_without_a_reference(self):
        report = self.same(os.path.join(TARGETS, "kernel_cache.py"), "--checks", "decorate,launch,soak",
                           *SHORT_LAUNCH)
        launch = [r for r in report["results"] if r["workload"] == "launch"]
        self.assertEqual([r.get("role") for r in launch], ["target"])
        self.assertTrue(all(c["status"] == "skip" for c in launch[0]["checks"]))

    def test_a_raising_target_and_a_probe(self):
        self.same(os.path.join(TARGETS, "broken", "raises_on_decorate.py"), "--checks", "decorate,import")
        self.same(os.path.join(TARGETS, "frame_cycle_461.py"), "--checks", "decorate",
                  "--probe", PYTHON_PROBE)


class ImportThenDecorate(unittest.TestCase):
    """`import` and `decorate` in one worker per role (the import measured first) give what each
    gives in a worker of its own (--checks import, --checks decorate), and a worker that crashes in
    the decorations keeps the import's result."""

    def alone_and_together(self, target):
        code, together = gate(2, target, "--checks", "decorate,import")
        _, decorate = gate(2, target, "--checks", "decorate")
        _, imported = gate(2, target, "--checks", "import")
        self.assertEqual(verdicts(together), verdicts(decorate) + verdicts(imported))
        return together

    def test_the_bundled_models(self):
        for name in ("frame_cycle_461", "frame_on_function", "keeps_decorating_locals", "declared_decorators",
                     "mixed_verdicts", "kernel_cache", "reads_kernel_source"):
            with self.subTest(name):
                self.alone_and_together(os.path.join(TARGETS, name + ".py"))

    def test_a_crash_in_the_decorations_keeps_the_import(self):
        report = self.alone_and_together(os.path.join(TARGETS, "broken", "crashes_on_decorate.py"))
        rows = {(r["workload"], r["role"]): r for r in report["results"]}
        self.assertIn("signal", rows[("decorate", "target")]["error"]["message"])
        self.assertIn("import then decorate", rows[("decorate", "target")]["error"]["message"])
        self.assertIsNone(rows[("import", "target")].get("error"))
        # The signal ended the decorations, not the import's measurement: said once, in that error.
        self.assertNotIn("worker_exit", rows[("import", "target")].get("details", {}))
        self.assertEqual({c["status"] for c in rows[("import", "target")]["checks"]}, {"pass", "skip"})

    def test_a_target_that_enables_gc_on_import(self):
        self.alone_and_together(os.path.join(TARGETS, "broken", "enables_gc_on_import.py"))


def main():
    global LEAKGATE
    LEAKGATE = sys.argv.pop(sys.argv.index("--leakgate") + 1)
    sys.argv.remove("--leakgate")
    if not os.access(LEAKGATE, os.X_OK):
        print("skip: no leakgate binary")
        sys.exit(77)
    unittest.main()


if __name__ == "__main__":
    main()
