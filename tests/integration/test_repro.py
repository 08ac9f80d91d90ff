#!/usr/bin/env python3
"""`leakgate repro`: the reproducer written from a real report, run in real interpreters.

    test_repro.py --leakgate BUILD/leakgate --part models     the regression models (no PyPI)
    test_repro.py --leakgate BUILD/leakgate --part releases   nvidia-cutlass-dsl 4.6.1 and 4.6.3

`models`: from gate reports of fixtures/targets/frame_cycle_461.py and
fixtures/targets/launch/uncached_packer.py, the reproducers exit 1 in this Python, and repro's
own verdict says so; an expectation they contradict (--expect-clean) is exit 1; from scans of
fixtures/scan scripts (--from-scan, or a scan report and the script), the reproducer that re-runs
the script exits 1, and 0 once the script is fixed. `releases`: from
`gate --target cute` reports on 4.6.1 (the seeds' two incidents: the decorator frame cycle and the
packer's per-launch cycles), each reproducer exits 1 on 4.6.1 and 0 on 4.6.3, where both were
fixed. The venvs are bisect's (it makes them from PyPI when they are missing: skip, exit 77, when
it cannot).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEAKGATE = None
LEAKING, FIXED = "4.6.1", "4.6.3"


def leakgate(*args, timeout=900):
    return subprocess.run([LEAKGATE, *args], capture_output=True, text=True, timeout=timeout)


def venv_python(version):
    cache = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate")
    return os.path.join(cache, "venvs", f"nvidia-cutlass-dsl-{version}-py%d.%d" % sys.version_info[:2],
                        "bin", "python")


def run_script(python, script):
    """The reproducer's exit code and output in `python`, run from a directory of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run([python, script], capture_output=True, text=True, timeout=600, cwd=tmp)


class Repro(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def gate(self, *args):
        report = self.path("report.json")
        run = leakgate("gate", "--quiet", "--json", report, *args)
        self.assertEqual(run.returncode, 1, run.stderr[-3000:])
        return report

    def repro(self, report, *args, expect=0):
        run = leakgate("repro", "--from", report, *args)
        self.assertEqual(run.returncode, expect, run.stdout + run.stderr[-3000:])
        return run


class Models(Repro):
    def test_the_frame_cycle_models_reproducer_exits_1_and_repro_says_so(self):
        # GIVEN the gate's report of the bundled 4.6.1 model
        report = self.gate("--checks", "decorate")
        script = self.path("repro.py")
        # WHEN repro writes the first finding's reproducer and runs it here, expecting the leak
        run = self.repro(report, "--out", script, "--expect-leak", sys.executable)
        # THEN it reproduces, as repro says, and run by hand it exits 1
        self.assertIn("decorate-frame-cycle", run.stdout)
        self.assertIn("exit 1: reproduces", run.stdout)
        self.assertIn("every expectation held; exit 0", run.stdout)
        with open(script) as text:
            source = text.read()
        self.assertIn("@dsl.kernel", source)
        self.assertNotIn("leakgate_dsl", source)
        self.assertNotIn("import _leakgate", source)
        alone = run_script(sys.executable, script)
        self.assertEqual(alone.returncode, 1, alone.stdout + alone.stderr)
        self.assertIn("REPRODUCED", alone.stdout)

    def test_from_gate_gates_the_default_target_first(self):
        out = self.path("repro.py")
        run = leakgate("repro", "--from-gate", "--out", out, "--expect-leak", sys.executable)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertIn("finding 1 of the gate of the default target: decorate-frame-cycle", run.stdout)
        self.assertIn("exit 1: reproduces", run.stdout)
        self.assertEqual(leakgate("repro", "--from-gate", "--from-scan", "--", out).returncode, 2)

    def test_an_expectation_the_reproducer_contradicts_is_exit_1(self):
        report = self.gate("--checks", "decorate")
        run = self.repro(report, "--out", self.path("repro.py"), "--expect-clean", sys.executable, expect=1)
        self.assertIn("NOT AS EXPECTED (expected: clean)", run.stdout)
        self.assertIn("an expectation did not hold; exit 1", run.stdout)

    def test_the_uncached_packers_launch_reproducer_exits_1(self):
        packer = os.path.join(ROOT, "fixtures/targets/launch/uncached_packer.py")
        report = self.gate("--target", packer, "--checks", "launch", "--launch-calls", "500", "--launch-runs", "3")
        script = self.path("repro.py")
        # A launch finding has no frames: the report names the target, not its file.
        self.repro(report, "--out", script, expect=2)
        run = self.repro(report, "--out", script, "--target", packer, "--expect-leak", sys.executable)
        self.assertIn("launch-cyclic-garbage", run.stdout)
        self.assertIn("exit 1: reproduces", run.stdout)
        with open(script) as text:
            self.assertIn(".__c_pointers__()", text.read())

    def test_without_out_the_script_is_the_output(self):
        report = self.gate("--checks", "decorate")
        run = self.repro(report)
        compile(run.stdout, "repro.py", "exec")
        self.assertTrue(run.stdout.startswith("#!/usr/bin/env python3\n"))
        self.assertIn("leakgate repro: finding 1", run.stderr)

    def test_a_finding_of_another_shape_is_a_usage_error_naming_the_shapes(self):
        report = self.gate("--target", os.path.join(ROOT, "fixtures/targets/launch/uncached_packer.py"),
                           "--checks", "launch", "--launch-calls", "500", "--launch-runs", "3")
        with open(report) as text:
            kinds = [finding["kind"] for finding in json.load(text)["findings"]]
        other = kinds.index("launch-allocations") + 1
        run = self.repro(report, "--finding", str(other), expect=2)
        self.assertIn(f"finding {other} is a launch-allocations finding", run.stderr)
        self.assertIn("launch-cyclic-garbage", run.stderr)
        self.assertIn("decorate-frame-cycle", run.stderr)

    def test_an_interpreter_that_is_not_there_is_a_usage_error_and_nothing_is_written(self):
        report = self.gate("--checks", "decorate")
        script = self.path("repro.py")
        run = self.repro(report, "--out", script, "--verify-with", self.path("no-such-python"), expect=2)
        self.assertIn("no such interpreter", run.stderr)
        self.assertFalse(os.path.exists(script))


class ScanScript(Repro):
    """A scan's findings, reproduced by re-running the scanned script: a copy of a scan fixture and
    the same copy fixed must exit 1 and 0 (the realworld corpus does it on real releases)."""

    def copy(self, fixture, fixed=None):
        with open(os.path.join(ROOT, "fixtures", "scan", fixture)) as text:
            source = text.read()
        if fixed:
            old, new = fixed
            self.assertIn(old, source)
            source = source.replace(old, new)
        path = self.path(("fixed_" if fixed else "") + fixture)
        with open(path, "w") as out:
            out.write(source)
        return path

    def test_from_scan_writes_a_reproducer_that_the_fix_makes_clean(self):
        # GIVEN a script that leaves a ctypes cycle per call, WHEN repro scans it and writes the
        # reproducer, THEN it exits 1 on the script and 0 on the fixed script (same reproducer,
        # the script's file swapped), and repro says what it runs.
        script = self.copy("leak_ctypes_cast_per_call.py")
        out = self.path("repro.py")
        run = leakgate("repro", "--from-scan", "--out", out, "--expect-leak", sys.executable, "--", script)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertIn("finding 1 of the scan of", run.stdout)
        self.assertIn("scanned script re-run", run.stdout)
        with open(out) as text:
            reproducer = text.read()
        self.assertNotIn("leakgate", reproducer.split('"""', 2)[2])  # plain Python after the header
        fixed = self.copy("leak_ctypes_cast_per_call.py",
                          ("ctypes.cast(ctypes.pointer(ctypes.c_int(value)), ctypes.c_void_p)",
                           "ctypes.c_void_p(value)"))
        os.replace(fixed, script)
        clean = run_script(sys.executable, out)
        self.assertEqual(clean.returncode, 0, clean.stdout + clean.stderr)
        self.assertIn("CLEAN", clean.stdout)

    def test_a_frame_cycle_the_script_collects_itself_still_reproduces(self):
        # GIVEN a scan report of a script that leaks a frame cycle and collects it itself, THEN the
        # reproducer (every collection saving what it finds) still exits 1 on it.
        script = self.copy("leak_gc_collect_at_end.py")
        report = self.path("scan.json")
        scan = leakgate("scan", "--quiet", "--json", report, "--", script)
        self.assertEqual(scan.returncode, 1, scan.stderr[-3000:])
        run = self.repro(report, "--out", self.path("repro.py"), "--expect-leak", sys.executable, "--", script)
        self.assertIn("exit 1: reproduces", run.stdout)

    def test_reduce_cuts_the_script_down_to_what_the_finding_needs(self):
        # GIVEN a training script of which one line makes the frame cycle, with statements that do
        # not matter at the top, in a class, in a function and in a loop, and lines that hold two
        # statements (which can only go whole), WHEN repro --reduce writes the reproducer, THEN it
        # carries the script cut down: the defect, what reaches it and the payload its frames hold
        # (half the bytes must stay) stay, the rest goes, a
        # block that loses all keeps `pass`, and the reproducer (which no longer reads the file)
        # still exits 1.
        script = self.copy("leak_frame_in_a_training_script.py")
        out = self.path("repro.py")
        run = leakgate("repro", "--from-scan", "--reduce", "--out", out, "--expect-leak", sys.executable,
                       "--", script)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertRegex(run.stdout, r"reduced .*training_script\.py: \d+ of 41 statements dropped, \d+ runs")
        with open(out) as text:
            reproducer = text.read()
        source = reproducer.split('SOURCE = """\\\n', 1)[1].split('"""  # the script, reduced', 1)[0]
        for kept in ("frame = sys._getframe()  # the defect", "model.forward(batch)", "train_step(model, step)",
                     "import sys", "a = 1; b = 2", "class Model:",
                     "self.weights = bytearray(1 << 20)"):  # the bytes the frames hold stay
            self.assertIn(kept, source)
        for gone in ("import json", "log(", "json.dump", "if loss > 1000",
                     "with open(os.devnull"):
            self.assertNotIn(gone, source)
        self.assertIn("    def __enter__(self):\n        pass\n", source)  # the protocol stays, not its body
        os.remove(script)  # the reproducer runs what it carries
        again = run_script(sys.executable, out)
        self.assertEqual(again.returncode, 1, again.stdout + again.stderr)
        self.assertIn("REPRODUCED: 3 frame(s) of forward (leak_frame_in_a_training_script.py)", again.stdout)

    def test_reduce_needs_an_interpreter_that_reproduces(self):
        script = self.copy("leak_ctypes_cast_per_call.py")
        report = self.path("scan.json")
        self.assertEqual(leakgate("scan", "--quiet", "--json", report, "--", script).returncode, 1)
        run = leakgate("repro", "--from", report, "--reduce", "--", script)
        self.assertEqual(run.returncode, 2)
        self.assertIn("--reduce needs an interpreter where the finding reproduces", run.stderr)
        gate = self.gate("--checks", "decorate")
        run = leakgate("repro", "--from", gate, "--reduce", "--expect-leak", sys.executable)
        self.assertEqual(run.returncode, 2)
        self.assertIn("--reduce cuts down a scanned script", run.stderr)

    def test_the_wrong_inputs_are_usage_errors(self):
        script = self.copy("leak_ctypes_cast_per_call.py")
        self.assertEqual(leakgate("repro", "--from-scan").returncode, 2)
        run = leakgate("repro", "--from-scan", "--from", script, "--", script)
        self.assertEqual(run.returncode, 2)
        self.assertIn("--from FILE, or --from-scan", run.stderr)
        gate = self.gate("--checks", "decorate")
        run = leakgate("repro", "--from", gate, "--", script)
        self.assertEqual(run.returncode, 2)
        self.assertIn("goes with a scan report", run.stderr)


class Releases(Repro):
    """The seeds' two incidents on the real CuTe DSL, CPU only."""

    def cute_report(self, *checks):
        return self.gate("--target", "cute", "--python", venv_python(LEAKING), *checks)

    def check_both_releases(self, report, check):
        script = self.path("repro.py")
        run = self.repro(report, "--out", script, "--expect-leak", venv_python(LEAKING),
                         "--expect-clean", venv_python(FIXED))
        self.assertIn(check, run.stdout)
        self.assertIn("every expectation held; exit 0", run.stdout)
        leaking, fixed = run_script(venv_python(LEAKING), script), run_script(venv_python(FIXED), script)
        self.assertEqual(leaking.returncode, 1, leaking.stdout + leaking.stderr[-3000:])
        self.assertEqual(fixed.returncode, 0, fixed.stdout + fixed.stderr[-3000:])
        self.assertIn(f"nvidia-cutlass-dsl {LEAKING}", leaking.stdout)
        self.assertIn(f"nvidia-cutlass-dsl {FIXED}", fixed.stdout)
        return script

    def test_the_decorator_frame_cycle_reproduces_on_4_6_1_and_not_on_4_6_3(self):
        script = self.check_both_releases(self.cute_report("--checks", "decorate"), "decorate-frame-cycle")
        with open(script) as text:
            source = text.read()
        self.assertIn("import cutlass.cute as cute", source)
        self.assertIn("@cute.kernel", source)
        # A frame of 3.10 has no qualified name (co_qualname is 3.11's): there the culprit is `kernel`.
        self.assertRegex(source, r"Culprit: (CuTeDSL\.)?kernel \(")

    def test_from_gate_gates_the_release_then_reproduces_its_first_finding(self):
        # --from-gate runs the gate itself (decorate, import, launch) in the leaking venv.
        script = self.path("repro.py")
        run = leakgate("repro", "--from-gate", "--target", "cute", "--python", venv_python(LEAKING), "--out",
                       script, "--expect-leak", venv_python(LEAKING), "--expect-clean", venv_python(FIXED))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertIn("finding 1 of the gate of cute: decorate-frame-cycle", run.stdout)
        self.assertIn("every expectation held; exit 0", run.stdout)

    def test_the_packers_per_launch_cycles_reproduce_on_4_6_1_and_not_on_4_6_3(self):
        report = self.cute_report("--checks", "launch", "--launch-calls", "500", "--launch-runs", "3")
        script = self.check_both_releases(report, "launch-cyclic-garbage")
        with open(script) as text:
            self.assertIn("cutlass.", text.read())


def make_venvs():
    """None when both releases' venvs are there (bisect makes the missing ones), else why not."""
    missing = [v for v in (LEAKING, FIXED) if not os.access(venv_python(v), os.X_OK)]
    if not missing:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        run = leakgate("bisect", "--quiet", "--target", "cute", "--versions", ",".join(missing), "--checks",
                       "decorate-sentinels", "--json", os.path.join(tmp, "bisect.json"), timeout=2400)
    still = [v for v in missing if not os.access(venv_python(v), os.X_OK)]
    if still:
        return f"no venv of nvidia-cutlass-dsl {', '.join(still)} (is PyPI reachable?): {run.stderr[-1500:]}"
    return None


def main():
    global LEAKGATE
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--part", choices=("models", "releases"), required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = args.leakgate
    if not os.access(LEAKGATE, os.X_OK):
        print("skip: no leakgate binary")
        return 77
    if args.part == "releases":
        why = make_venvs()
        if why:
            print("skip: " + why)
            return 77
    loader = unittest.defaultTestLoader
    suite = (unittest.TestSuite([loader.loadTestsFromTestCase(Models), loader.loadTestsFromTestCase(ScanScript)])
             if args.part == "models" else loader.loadTestsFromTestCase(Releases))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
