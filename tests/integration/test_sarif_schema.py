#!/usr/bin/env python3
"""leakgate's SARIF files against the OASIS SARIF 2.1.0 JSON schema (tests/integration/schemas/),
with jsonschema from PyPI, and what a code-scanning service needs of them.

    test_sarif_schema.py --leakgate BUILD/leakgate

Written once each: a gate with failures and skips, a target that raises (a tool notification, not
a result), a probe plug-in's checks, a scan, and a lint of Python and C/C++ sources (columns). Every
rule has a short and a full description, help in text and Markdown, and a default level; every
result's level is its rule's. Exit 77 (skip) with the reason when jsonschema cannot be installed
(no PyPI).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

from tool_venv import tool_venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SCHEMA = os.path.join(HERE, "schemas", "sarif-schema-2.1.0.json")
TARGETS = os.path.join(ROOT, "fixtures", "targets")
LEAKGATE = None
VALIDATOR = None  # a python with jsonschema

VALIDATE = r'''
import json, sys, jsonschema
with open(sys.argv[1]) as handle:
    schema = json.load(handle)
with open(sys.argv[2]) as handle:
    document = json.load(handle)
validator = jsonschema.validators.validator_for(schema)(schema)
errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
print("\n".join(errors[:20]))
sys.exit(1 if errors else 0)
'''


CHECKS_REFERENCE = os.path.join(ROOT, "docs", "reference", "checks.md")


def reference_anchors():
    """The anchors Markdown renderers give the checks reference's headings (GitHub's rule)."""
    anchors = set()
    with open(CHECKS_REFERENCE, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                title = line.lstrip("#").strip().lower()
                anchors.add("".join(c for c in title if c.isalnum() or c in "-_ ").replace(" ", "-"))
    return anchors


class SarifSchema(unittest.TestCase):
    def sarif(self, *args, expect):
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "report.sarif")
            run = subprocess.run([LEAKGATE, args[0], "--quiet", "--sarif", out, *args[1:]], capture_output=True,
                                 text=True, timeout=600, cwd=directory)
            self.assertEqual(run.returncode, expect, run.stderr)
            check = subprocess.run([VALIDATOR, "-c", VALIDATE, SCHEMA, out], capture_output=True,
                                   text=True, timeout=120)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
            with open(out, encoding="utf-8") as handle:
                document = json.load(handle)
            self.assert_rules_in_full(document["runs"][0])
            return document["runs"][0]

    def assert_rules_in_full(self, run):
        rules = run["tool"]["driver"]["rules"]
        for rule in rules:
            with self.subTest(rule=rule["id"]):
                self.assertTrue(rule["shortDescription"]["text"])
                self.assertTrue(rule["fullDescription"]["text"])
                self.assertTrue(rule["help"]["text"])
                self.assertIn(rule["defaultConfiguration"]["level"], ("error", "warning", "note"))
                if not rule["id"].startswith(("probe", "plugin")) and "markdown" in rule["help"]:
                    self.assertIn("docs/reference/checks.md", rule["help"]["markdown"])
                    # helpUri: the checks reference, at the heading of the rule's own id
                    uri, _, anchor = rule["helpUri"].partition("#")
                    self.assertEqual(uri, "file://" + CHECKS_REFERENCE)
                    self.assertIn(anchor, reference_anchors(), rule["helpUri"])
        for result in run["results"]:
            self.assertEqual(result["level"], rules[result["ruleIndex"]]["defaultConfiguration"]["level"])
        invocation = run["invocations"][0]
        self.assertIn("commandLine", invocation)
        self.assertIn("exitCode", invocation)

    def test_a_gate_with_failures_and_skips(self):
        run = self.sarif("gate", "--checks", "decorate,import,launch", expect=1)
        kinds = {r["ruleId"] for r in run["results"]}
        self.assertIn("frame-cycle", kinds)
        described = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
        self.assertNotEqual(described["frame-cycle"]["shortDescription"]["text"],
                            described["frame-cycle"]["fullDescription"]["text"])
        # The bundled model binds `cur_frame` at line 44 and returns at 47: the binding is the
        # location, the return a related one (without --lint too).
        kernel = next(r for r in run["results"] if "frame_cycle_461.py:47" in r["message"]["text"])
        self.assertEqual(kernel["locations"][0]["physicalLocation"]["region"]["startLine"], 44)
        self.assertIn(47, [r["physicalLocation"]["region"]["startLine"] for r in kernel["relatedLocations"]])

    def test_a_target_that_raises_is_a_notification(self):
        run = self.sarif("gate", "--target", os.path.join(TARGETS, "broken", "raises_on_decorate.py"),
                         "--checks", "decorate", expect=3)
        notifications = run["invocations"][0]["toolExecutionNotifications"]
        self.assertTrue(any(n["descriptor"]["id"] == "workload-error" for n in notifications))
        self.assertFalse(run["invocations"][0]["executionSuccessful"])

    def test_a_probe_plugin_and_a_scan(self):
        probe = os.path.join(ROOT, "examples", "probes", "decorated_functions_freed.py")
        self.sarif("gate", "--target", os.path.join(TARGETS, "kernel_cache.py"), "--checks", "probe",
                   "--probe", probe, expect=1)
        run = self.sarif("scan", "--", os.path.join(ROOT, "fixtures", "scan", "leak_dsl_decorator_self_frame.py"),
                         expect=1)
        self.assertTrue(run["results"])

    def test_a_lint_has_described_rules_columns_and_warning_levels(self):
        run = self.sarif("lint", os.path.join(ROOT, "fixtures", "lint"), expect=1)
        described = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
        for rule in ("lint:own-frame-local", "lint:frame-stored"):
            self.assertIn(rule, described)
            self.assertEqual(described[rule]["defaultConfiguration"]["level"], "warning")
            self.assertNotEqual(described[rule]["shortDescription"]["text"], rule)
        lint_results = [r for r in run["results"] if r["ruleId"].startswith("lint:")]
        self.assertTrue(lint_results)
        for result in lint_results:
            region = result["locations"][0]["physicalLocation"]["region"]
            self.assertGreaterEqual(region["startColumn"], 1, result)
        # `lint --fix`'s edits as SARIF fixes (3.55), valid against the schema above.
        fixed = [r for r in lint_results if "fixes" in r]
        self.assertTrue(fixed)
        for result in fixed:
            self.assertIn(result["ruleId"], ("lint:own-frame-local", "lint:closure-cycle"))
            replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
            self.assertIn("try:", replacement["insertedContent"]["text"])

    def test_gate_lint_results_carry_the_fixes(self):
        run = self.sarif("gate", "--lint", "--checks", "decorate", "--target",
                         os.path.join(TARGETS, "frame_cycle_461.py"), expect=1)
        fixed = [r for r in run["results"] if r["ruleId"] == "lint:own-frame-local" and "fixes" in r]
        self.assertTrue(fixed, [r["ruleId"] for r in run["results"]])

    def test_a_finding_an_ignore_comment_accepts_is_a_suppressed_result(self):
        with tempfile.TemporaryDirectory() as directory:
            script = os.path.join(directory, "dsl.py")
            with open(script, "w") as handle:
                handle.write("import sys\n\n\ndef accepted():\n"
                             "    frame = sys._getframe()  # leakgate: ignore[own-frame-local]\n"
                             "    return frame.f_lineno\n\n\ndef kept():\n"
                             "    frame = sys._getframe()\n    return frame.f_lineno\n")
            run = self.sarif("lint", script, expect=1)
        lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in run["results"]}
        self.assertEqual(sorted(lines), [5, 10])
        self.assertEqual(lines[5]["suppressions"][0]["kind"], "inSource")
        self.assertNotIn("suppressions", lines[10])


def main():
    global LEAKGATE, VALIDATOR
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = os.path.abspath(args.leakgate)
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return 77
    directory, why = tool_venv("jsonschema")
    if directory is None:
        print(f"skip: jsonschema could not be installed from PyPI: {why}")
        return 77
    VALIDATOR = os.path.join(directory, "bin", "python")
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
