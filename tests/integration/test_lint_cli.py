#!/usr/bin/env python3
"""`leakgate lint`'s command-line contract: usage errors, the JSON report, and a list of files too
long for one worker's command line.

    test_lint_cli.py --leakgate BUILD/leakgate

Exit 77 (skip) when the binary is missing.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
LEAKGATE = None
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "lint")


def lint(*args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        proc = subprocess.run([LEAKGATE, "lint", "--json", out, "--quiet", *args],
                              capture_output=True, text=True, timeout=600)
        report = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as handle:
                report = json.load(handle)
        return proc, report


class LintCli(unittest.TestCase):
    def test_a_missing_path_is_a_usage_error(self):
        proc, report = lint(os.path.join(FIXTURES, "no_such_file.py"))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("no such file or directory", proc.stderr)
        self.assertIsNone(report)

    def test_a_clean_file_passes_with_one_check(self):
        proc, report = lint(os.path.join(FIXTURES, "clean_caller_frames.py"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(report["command"], "lint")
        self.assertEqual([(c["name"], c["status"]) for c in report["checks"]], [("lint", "pass")])
        self.assertEqual(report["findings"], [])
        self.assertEqual(report["results"][0]["details"]["files"], 1)

    def test_findings_carry_rule_function_local_column_and_fix(self):
        proc, report = lint(os.path.join(FIXTURES, "own_frame_in_local.py"))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        finding = next(f for f in report["findings"] if f["frames"][0]["function"] == "DSL.kernel")
        self.assertEqual(finding["kind"], "lint:own-frame-local")
        self.assertEqual(finding["locals"], ["cur_frame"])
        self.assertEqual(finding["path"], [{"kind": "column", "label": "9", "to": ""}])
        self.assertIn("cur_frame", finding["summary"])
        self.assertTrue(finding["fix"])

    def test_a_long_list_of_files_is_split_across_workers(self):
        # ~150 KiB of paths: more than one command-line argument may hold.
        path = os.path.realpath(os.path.join(FIXTURES, "frame_stored.py"))
        copies = 150 * 1024 // len(path) + 1
        proc, single = lint(path)
        expected = len(single["findings"])
        proc, report = lint(*([path] * copies))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(report["results"][0]["details"]["files"], copies)
        self.assertEqual(len(report["findings"]), copies * expected)
        self.assertEqual(report["checks"][0]["amount"], copies * expected)


def main():
    global LEAKGATE
    args = sys.argv[1:]
    if len(args) != 2 or args[0] != "--leakgate":
        print(__doc__)
        return 2
    LEAKGATE = args[1]
    if not os.access(LEAKGATE, os.X_OK):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return SKIP
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
