#!/usr/bin/env python3
"""leakgate's JUnit files against junit-10.xsd (tests/integration/schemas/), with xmlschema from PyPI.

    test_junit_schema.py --leakgate BUILD/leakgate
Every kind of case is written once: passes, failures with findings, skips, errors of a target that
raises and of one that crashes, a probe plug-in's checks, scan and lint. The schema names a test
case's error element `errors`, where every JUnit writer and reader (pytest, Jenkins, GitLab) uses
`error`: leakgate writes `error`, and the validation reads it as the schema spells it (the one
rename, said here and in schemas/README.md). Exit 77 (skip) with the reason when xmlschema cannot
be installed (no PyPI).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

from tool_venv import tool_venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SCHEMA = os.path.join(HERE, "schemas", "junit-10.xsd")
TARGETS = os.path.join(ROOT, "fixtures", "targets")
LEAKGATE = None
VALIDATOR = None  # a python with xmlschema


def tool_python():
    """A python with xmlschema; None with the reason when pip fails."""
    directory, why = tool_venv("xmlschema")
    return (os.path.join(directory, "bin", "python"), "") if directory else (None, why)


VALIDATE = r'''
import sys, xml.etree.ElementTree as ET, xmlschema
schema = xmlschema.XMLSchema(sys.argv[1])
tree = ET.parse(sys.argv[2])
for case in tree.iter("testcase"):
    for child in case:
        if child.tag == "error":
            child.tag = "errors"  # junit-10.xsd's spelling (see the docstring)
errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(tree)]
print("\n".join(errors))
sys.exit(1 if errors else 0)
'''


class JunitSchema(unittest.TestCase):
    def junit(self, *args, expect):
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "report.xml")
            run = subprocess.run([LEAKGATE, args[0], "--quiet", "--junit", out, *args[1:]], capture_output=True,
                                 text=True, timeout=600, cwd=directory)
            self.assertEqual(run.returncode, expect, run.stderr)
            check = subprocess.run([VALIDATOR, "-c", VALIDATE, SCHEMA, out], capture_output=True,
                                   text=True, timeout=120)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
            return ElementTree.parse(out).getroot()

    def assert_unique_ids(self, root):
        ids = [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]
        self.assertEqual(len(ids), len(set(ids)), ids)

    def test_a_gate_with_failures_skips_and_the_reference(self):
        root = self.junit("gate", "--checks", "decorate,import,launch", expect=1)
        self.assert_unique_ids(root)
        self.assertTrue(list(root.iter("failure")))
        self.assertTrue(list(root.iter("skipped")))

    def test_errors_of_a_target_that_raises_and_of_one_that_crashes(self):
        for target in ("raises_on_decorate.py", "crashes_on_decorate.py"):
            with self.subTest(target=target):
                root = self.junit("gate", "--target", os.path.join(TARGETS, "broken", target),
                                  "--checks", "decorate", expect=3)
                self.assertTrue(list(root.iter("error")))
                if target == "raises_on_decorate.py":
                    self.assertTrue(list(root.iter("system-err")), "the traceback, in <system-err>")

    def test_a_probe_plugin_and_a_scan_and_a_lint(self):
        probe = os.path.join(ROOT, "examples", "probes", "decorated_functions_freed.py")
        root = self.junit("gate", "--target", os.path.join(TARGETS, "kernel_cache.py"), "--checks", "probe",
                          "--probe", probe, expect=1)
        self.assert_unique_ids(root)
        self.junit("scan", "--", os.path.join(ROOT, "fixtures", "scan", "leak_dsl_decorator_self_frame.py"), expect=1)
        self.junit("lint", os.path.join(ROOT, "fixtures", "lint"), expect=1)


def main():
    global LEAKGATE, VALIDATOR
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = args.leakgate
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return 77
    VALIDATOR, why = tool_python()
    if VALIDATOR is None:
        print(f"skip: xmlschema could not be installed from PyPI: {why}")
        return 77
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
