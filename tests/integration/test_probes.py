#!/usr/bin/env python3
"""Probe plug-ins in the gate (`leakgate gate --probe`), run on the real CLI.

    test_probes.py --leakgate BUILD/leakgate --example-probe=LIB --throwing-probe=LIB
                   --wrong-abi-probe=LIB --no-symbol-probe=LIB

The two examples of examples/probes/ (the Python one, and the C++ one built against the build
tree) must fail on fixtures/targets/kernel_cache.py, which keeps one record per decorated
function and passes every built-in check, and pass on the reference. Bad plug-ins (another ABI,
no symbol, one that throws in each phase, a Python probe that raises at import or returns
nonsense, a check name that is taken) are each an `error` of their own checks, and every other
result of the run is kept.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
KERNEL_CACHE = os.path.join(ROOT, "fixtures", "targets", "kernel_cache.py")
PYTHON_EXAMPLE = os.path.join(ROOT, "examples", "probes", "decorated_functions_freed.py")
RAISES_ON_IMPORT = os.path.join(ROOT, "tests", "plugins", "raises_on_import.py")
ARGS = None


def gate(*args, env=None):
    """Runs `leakgate gate --quiet --json FILE ARGS`; returns (exit code, report, stderr)."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "gate.json")
        run = subprocess.run([ARGS.leakgate, "gate", "--quiet", "--json", out, *args],
                             capture_output=True, text=True, timeout=600,
                             env=dict(os.environ, **(env or {})))
        report = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                report = json.load(f)
        return run.returncode, report, run.stderr


def checks_of(report, role="target"):
    """{name: check} over the results of `role`."""
    return {check["name"]: check for result in report["results"] if result["role"] == role
            for check in result["checks"]}


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class ExampleProbes(unittest.TestCase):
    def test_both_examples_fail_on_a_dsl_that_keeps_every_decorated_function(self):
        code, report, stderr = gate("--target", KERNEL_CACHE, "--checks", "import",
                                    "--probe", PYTHON_EXAMPLE, "--probe", ARGS.example_probe)
        self.assertEqual(code, 1, stderr)
        checks = checks_of(report)
        # The built-in checks cannot see it: no frame, no sentinel is kept.
        self.assertEqual(checks["import-sentinels"]["status"], "pass")
        freed = checks["decorated-functions-freed"]
        self.assertEqual(freed["status"], "fail")
        self.assertEqual(freed["amount"], 200)
        blocks = checks["retained-blocks-per-decoration"]
        self.assertEqual(blocks["status"], "fail")
        self.assertGreaterEqual(blocks["amount"], 1000)  # thousandths: a block per decoration or more
        # On the reference in the same run, both pass.
        reference = checks_of(report, "reference")
        self.assertEqual(reference["decorated-functions-freed"]["status"], "pass")
        self.assertEqual(reference["retained-blocks-per-decoration"]["status"], "pass")
        # Under their own names in the report's top-level checks too.
        self.assertEqual({c["name"] for c in report["checks"] if c["workload"] == "probe"},
                         {"decorated-functions-freed", "retained-blocks-per-decoration"})

    def test_both_examples_pass_on_the_reference(self):
        code, report, stderr = gate("--target", "reference", "--checks", "probe",
                                    "--probe", PYTHON_EXAMPLE, "--probe", ARGS.example_probe)
        self.assertEqual(code, 0, stderr)
        checks = checks_of(report)
        self.assertEqual(set(checks), {"decorated-functions-freed", "retained-blocks-per-decoration"})
        self.assertTrue(all(check["status"] == "pass" for check in checks.values()), checks)

    def test_probe_checks_appear_in_every_output(self):
        with tempfile.TemporaryDirectory() as directory:
            outputs = {kind: os.path.join(directory, f"gate.{kind}") for kind in ("junit", "sarif", "html")}
            run = subprocess.run([ARGS.leakgate, "gate", "--target", KERNEL_CACHE, "--checks", "probe",
                                  "--probe", PYTHON_EXAMPLE, "--no-color",
                                  "--junit", outputs["junit"], "--sarif", outputs["sarif"],
                                  "--html", outputs["html"]],
                                 capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 1, run.stderr)
            self.assertIn("FAIL  decorated-functions-freed", run.stdout)
            names = [case.get("name") for case in ElementTree.parse(outputs["junit"]).iter("testcase")]
            self.assertIn("decorated-functions-freed", " ".join(names))
            for kind in ("sarif", "html"):
                with open(outputs[kind], encoding="utf-8") as f:
                    self.assertIn("decorated-functions-freed", f.read(), kind)

    def test_a_baseline_judges_a_probe_check_by_its_amount(self):
        with tempfile.TemporaryDirectory() as directory:
            baseline = os.path.join(directory, "baseline.json")
            first = subprocess.run([ARGS.leakgate, "gate", "--quiet", "--json", baseline, "--target",
                                    KERNEL_CACHE, "--checks", "probe", "--probe", PYTHON_EXAMPLE],
                                   capture_output=True, text=True, timeout=600)
            self.assertEqual(first.returncode, 1, first.stderr)
            # The same figure as the baseline's: within budget, so it passes.
            code, report, stderr = gate("--target", KERNEL_CACHE, "--checks", "probe",
                                        "--probe", PYTHON_EXAMPLE, "--baseline", baseline)
            self.assertEqual(code, 0, stderr)
            self.assertIn("within budget", checks_of(report)["decorated-functions-freed"]["reason"])
            # A budgets file may name a probe's check when --probe is given.
            budgets = write(directory, "budgets.txt", "decorated-functions-freed = 5\n")
            code, report, stderr = gate("--target", KERNEL_CACHE, "--checks", "probe", "--probe",
                                        PYTHON_EXAMPLE, "--baseline", baseline, "--budgets", budgets)
            self.assertEqual(code, 0, stderr)
            self.assertIn("budget +5", checks_of(report)["decorated-functions-freed"]["reason"])


class BadPlugins(unittest.TestCase):
    def assert_error_of_its_own(self, probe, check, message, env=None):
        """The plug-in's `check` is an error saying `message`; the built-in import checks stand."""
        code, report, stderr = gate("--target", "reference", "--checks", "import", "--probe", probe, env=env)
        self.assertEqual(code, 3, stderr)
        checks = checks_of(report)
        self.assertEqual(checks[check]["status"], "error", checks)
        self.assertIn(message, checks[check]["reason"])
        self.assertEqual(checks["import-sentinels"]["status"], "pass")
        self.assertEqual(checks["import-frame-cycle"]["status"], "pass")
        return checks

    def test_a_plugin_built_for_another_abi_is_refused_before_anything_of_it_runs(self):
        self.assert_error_of_its_own(ARGS.wrong_abi_probe, "leakgate_wrong_abi_probe",
                                     "built for plug-in ABI 999")

    def test_a_library_without_the_registration_symbol(self):
        self.assert_error_of_its_own(ARGS.no_symbol_probe, "leakgate_no_symbol_probe",
                                     "defines no `leakgate_plugin` symbol")

    def test_a_file_that_is_no_shared_library(self):
        with tempfile.TemporaryDirectory() as directory:
            probe = write(directory, "libnot_elf.so", "not a shared library\n")
            self.assert_error_of_its_own(probe, "not_elf", "could not be loaded")

    def test_a_plugin_that_throws_in_each_phase(self):
        for phase in ("before", "afterReturn", "inGarbage", "afterCollection"):
            with self.subTest(phase=phase):
                checks = self.assert_error_of_its_own(ARGS.throwing_probe, "throwing-probe",
                                                      f"threw in {phase}: thrown in {phase}",
                                                      env={"LEAKGATE_TEST_THROW_IN": phase})
                # Its sibling probe is not the one that threw: its check stands.
                self.assertEqual(checks["quiet-probe"]["status"], "pass")

    def test_a_plugin_that_throws_at_registration_or_in_its_workload(self):
        checks = self.assert_error_of_its_own(ARGS.throwing_probe, "leakgate_throwing_probe",
                                              "threw at registration: thrown in register",
                                              env={"LEAKGATE_TEST_THROW_IN": "register"})
        self.assertNotIn("quiet-probe", checks)
        checks = self.assert_error_of_its_own(ARGS.throwing_probe, "quiet-probe", "workload raised",
                                              env={"LEAKGATE_TEST_THROW_IN": "workload"})
        self.assertEqual(checks["throwing-probe"]["status"], "error")

    def test_a_plugin_that_throws_nowhere_passes(self):
        code, report, stderr = gate("--target", "reference", "--checks", "probe",
                                    "--probe", ARGS.throwing_probe)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(checks_of(report)["throwing-probe"]["status"], "pass")

    def test_a_python_probe_that_raises_at_import(self):
        self.assert_error_of_its_own(RAISES_ON_IMPORT, "raises_on_import",
                                     "raised on import: RuntimeError: this probe plug-in cannot be imported")

    def test_a_python_probe_that_returns_what_is_no_check(self):
        with tempfile.TemporaryDirectory() as directory:
            cases = {
                "bad_status.py": ('CHECKS = ["x-check"]\ndef after_collection():\n'
                                  '    return {"status": "maybe"}\n', "x-check", "with status `maybe`"),
                "bad_key.py": ('CHECKS = ["x-check"]\ndef after_return():\n'
                               '    return {"status": "pass", "verdict": 1}\n', "x-check", "unknown key `verdict`"),
                "undeclared.py": ('CHECKS = ["x-check"]\ndef after_collection():\n'
                                  '    return {"check": "y-check", "status": "pass"}\n', "x-check",
                                  "not in the plug-in's CHECKS"),
                "silent.py": ('CHECKS = ["x-check"]\n', "x-check", "decided nothing"),
                "raises.py": ('CHECKS = ["x-check"]\ndef in_garbage(garbage):\n'
                              '    raise ValueError("no")\n', "x-check", "threw in inGarbage: ValueError: no"),
            }
            for name, (source, check, message) in cases.items():
                with self.subTest(probe=name):
                    self.assert_error_of_its_own(write(directory, name, source), check, message)

    def test_a_probe_check_may_not_take_a_builtin_name(self):
        with tempfile.TemporaryDirectory() as directory:
            probe = write(directory, "taken.py", 'CHECKS = ["import-sentinels"]\n'
                          'def after_collection():\n    return {"status": "pass"}\n')
            code, report, stderr = gate("--target", "reference", "--checks", "probe", "--probe", probe)
            self.assertEqual(code, 3, stderr)
            check = checks_of(report)["import-sentinels"]
            self.assertEqual(check["status"], "error")
            self.assertIn("is one of the gate's own", check["reason"])

    def test_a_probe_that_is_not_a_file_is_a_usage_error(self):
        code, report, stderr = gate("--target", "reference", "--probe", "/nonexistent/probe.py")
        self.assertEqual(code, 2)
        self.assertIsNone(report)
        self.assertIn("--probe /nonexistent/probe.py: not a file", stderr)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    for name in ("example-probe", "throwing-probe", "wrong-abi-probe", "no-symbol-probe"):
        parser.add_argument(f"--{name}", required=True)
    ARGS, rest = parser.parse_known_args()
    if not os.path.exists(ARGS.leakgate):
        print(f"no leakgate binary at {ARGS.leakgate}", file=sys.stderr)
        return 77
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
