#!/usr/bin/env python3
"""Self-test of run_fixture.py against a fake leakgate that writes a canned report.

Proves the runner can fail: every kind of mismatch must give exit status 1,
a missing binary 77, and a matching report 0.  Standard library only:

    python3 -m unittest tests/integration/test_run_fixture.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402

FAKE_LEAKGATE = """\
#!{python}
# Fake leakgate: records its argv, writes the canned report given in
# FAKE_REPORT to the --json path (unless FAKE_NO_JSON is set) and exits
# with FAKE_EXIT.
import json, os, sys
with open(os.environ["FAKE_ARGV"], "w") as out:
    json.dump(sys.argv[1:], out)
if not os.environ.get("FAKE_NO_JSON"):
    path = sys.argv[sys.argv.index("--json") + 1]
    with open(os.environ["FAKE_REPORT"]) as src, open(path, "w") as dst:
        dst.write(src.read())
sys.stderr.write(os.environ.get("FAKE_STDERR", ""))
sys.exit(int(os.environ["FAKE_EXIT"]))
"""

DSL_FIXTURE = """\
\"\"\"A fixture for the runner's self-test.\"\"\"
# args: --timeout 7
# expect: exit 1
# expect: finding frame-cycle function=DSL.kernel local=cur_frame pins=build_model
# expect: no-finding retained-frame
print("never run by the fake")
"""


def make_report(exit_code=1, findings=None, results=None, **extra):
    report = {
        "schema": "leakgate/1",
        "command": "scan",
        "exit_code": exit_code,
        "results": results or [{"workload": "scan", "status": "ok", "error": None}],
        "checks": [
            {"name": "frame-cycle", "status": "fail" if findings else "pass", "reason": ""},
            {"name": "retained-frame", "status": "pass", "reason": ""},
        ],
        "findings": findings if findings is not None else [],
    }
    report.update(extra)
    return report


def dsl_finding(function="DSL.kernel", local="cur_frame", pinned="build_model", kind="frame-cycle"):
    return {
        "kind": kind,
        "summary": f"{function} frame refers to itself through local '{local}'",
        "frames": [
            {"function": function, "file": "/x/fixture.py", "line": 12},
            {"function": "define_kernels", "file": "/x/fixture.py", "line": 30},
            {"function": pinned, "file": "/x/fixture.py", "line": 40},
        ],
        "locals": [local],
        "objects": 57,
        "bytes": 16777500,
    }


class RunFixtureTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="run-fixture-test-")
        self.dir = self.tmp.name
        self.fake = os.path.join(self.dir, "leakgate")
        with open(self.fake, "w") as handle:
            handle.write(FAKE_LEAKGATE.format(python=sys.executable))
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IXUSR)
        self.env_backup = dict(os.environ)
        os.environ["FAKE_ARGV"] = os.path.join(self.dir, "argv.json")
        os.environ["FAKE_REPORT"] = os.path.join(self.dir, "canned.json")
        os.environ.pop("FAKE_NO_JSON", None)
        os.environ.pop("LEAKGATE_PYTHON_VERSION", None)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env_backup)
        self.tmp.cleanup()

    def fixture(self, text=DSL_FIXTURE, name="fixture.py"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as handle:
            handle.write(textwrap.dedent(text))
        return path

    def run_with(self, report, exit_code, fixture=None, extra_args=(), stderr=""):
        with open(os.environ["FAKE_REPORT"], "w") as handle:
            json.dump(report, handle)
        os.environ["FAKE_EXIT"] = str(exit_code)
        os.environ["FAKE_STDERR"] = stderr
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = run_fixture.main(
                ["--leakgate", self.fake, *extra_args, fixture or self.fixture()]
            )
        return status, out.getvalue()

    # -- passing

    def test_a_matching_report_passes(self):
        status, out = self.run_with(make_report(1, [dsl_finding()]), 1)
        self.assertEqual(status, 0, out)
        self.assertIn("PASS", out)

    def test_args_go_before_the_double_dash_and_the_fixture_after_it(self):
        fixture = self.fixture()
        self.run_with(make_report(1, [dsl_finding()]), 1, fixture=fixture)
        with open(os.environ["FAKE_ARGV"]) as handle:
            argv = json.load(handle)
        self.assertEqual(argv[0], "scan")
        self.assertEqual(argv[1], "--json")
        self.assertEqual(argv[3:], ["--timeout", "7", "--", os.path.abspath(fixture)])

    def test_error_substring_may_be_in_the_stderr_tail(self):
        fixture = self.fixture("# expect: exit 3\n# expect: error fixture about to crash\n")
        result = {
            "workload": "scan",
            "status": "error",
            "error": {
                "message": "killed by signal 11 (Segmentation fault)",
                "signal": 11,
                "stderr_tail": "fixture about to crash\n",
            },
        }
        status, out = self.run_with(make_report(3, [], [result]), 3, fixture=fixture)
        self.assertEqual(status, 0, out)

    def test_python_3_10_reports_compare_function_names_by_co_name(self):
        report = make_report(1, [dsl_finding(function="kernel")])
        status, out = self.run_with(report, 1, extra_args=["--python-version", "3.10"])
        self.assertEqual(status, 0, out)
        status, out = self.run_with(report, 1)
        self.assertEqual(status, 1, out)
        status, out = self.run_with(dict(report, python="3.10.13"), 1)
        self.assertEqual(status, 0, out)

    def test_an_expectation_may_hold_on_some_pythons_only(self):
        fixture = self.fixture(
            "# expect (python >= 3.12): exit 1\n"
            "# expect (python >= 3.12): finding frame-cycle function=DSL.kernel\n"
            "# expect (python < 3.12): exit 0\n"
            "# expect(python<3.12): no-finding frame-cycle\n"
        )
        leak, clean = make_report(1, [dsl_finding()]), make_report(0, [])
        for report, code, version, expected in ((leak, 1, "3.12.1", 0), (clean, 0, "3.11.7", 0),
                                                 (clean, 0, "3.13.0", 1), (leak, 1, "3.10.13", 1)):
            with self.subTest(version=version, code=code):
                status, out = self.run_with(dict(report, python=version), code, fixture=fixture)
                self.assertEqual(status, expected, out)

    def test_python_dependent_expectations_need_to_know_the_python(self):
        fixture = self.fixture("# expect (python >= 3.12): exit 1\n# expect (python < 3.12): exit 0\n")
        status, out = self.run_with(make_report(0, []), 0, fixture=fixture)
        self.assertEqual(status, 1, out)
        self.assertIn("depend on the Python", out)
        status, out = self.run_with(make_report(0, []), 0, fixture=fixture,
                                    extra_args=["--python-version", "3.11"])
        self.assertEqual(status, 0, out)

    def test_a_condition_on_an_args_line_is_refused(self):
        fixture = self.fixture("# args (python >= 3.12): --timeout 3\n# expect: exit 0\n")
        status, out = self.run_with(make_report(0, []), 0, fixture=fixture)
        self.assertEqual(status, 1, out)
        self.assertIn("only '# expect' lines", out)

    # -- failing

    def test_a_fixture_without_expectations_fails(self):
        fixture = self.fixture("print('no expectations here')\n")
        status, out = self.run_with(make_report(0), 0, fixture=fixture)
        self.assertEqual(status, 1)
        self.assertIn("no '# expect:' line", out)

    def test_an_unknown_expectation_fails(self):
        fixture = self.fixture("# expect: exit 0\n# expect: leaks-nothing\n")
        status, out = self.run_with(make_report(0), 0, fixture=fixture)
        self.assertEqual(status, 1)
        self.assertIn("unknown expectation", out)

    def test_a_wrong_exit_code_fails_and_shows_the_findings(self):
        status, out = self.run_with(make_report(0, []), 0)
        self.assertEqual(status, 1)
        self.assertIn("exit 1", out)
        self.assertIn("no finding of kind frame-cycle", out)

    def test_a_finding_lacking_one_property_fails_and_names_it(self):
        report = make_report(1, [dsl_finding(local="frame")])
        status, out = self.run_with(report, 1)
        self.assertEqual(status, 1)
        self.assertIn("closest lacks local=cur_frame", out)
        self.assertIn("DSL.kernel frame refers to itself through local 'frame'", out)

    def test_a_finding_with_too_few_bytes_fails(self):
        fixture = self.fixture(
            "# expect: finding frame-cycle function=DSL.kernel min-bytes=16777216\n"
        )
        small = dsl_finding()
        small["bytes"] = 1049
        status, out = self.run_with(make_report(1, [small]), 1, fixture=fixture)
        self.assertEqual(status, 1)
        self.assertIn("closest lacks min-bytes=16777216", out)
        status, out = self.run_with(make_report(1, [dsl_finding()]), 1, fixture=fixture)
        self.assertEqual(status, 0, out)

    def test_the_culprit_must_be_the_first_frame(self):
        finding = dsl_finding()
        finding["frames"].reverse()
        status, out = self.run_with(make_report(1, [finding]), 1)
        self.assertEqual(status, 1)
        self.assertIn("function=DSL.kernel", out)

    def test_a_forbidden_finding_fails(self):
        report = make_report(1, [dsl_finding(), dsl_finding(kind="retained-frame")])
        status, out = self.run_with(report, 1)
        self.assertEqual(status, 1)
        self.assertIn("no-finding retained-frame", out)

    def test_a_missing_error_substring_fails(self):
        fixture = self.fixture("# expect: exit 3\n# expect: error timed out\n")
        result = {
            "workload": "scan",
            "status": "error",
            "error": {"message": "script raised ValueError", "signal": None, "stderr_tail": ""},
        }
        status, out = self.run_with(make_report(3, [], [result]), 3, fixture=fixture)
        self.assertEqual(status, 1)
        self.assertIn("substring not in any error message", out)

    def test_an_error_expectation_needs_a_result_with_status_error(self):
        fixture = self.fixture("# expect: error timed out\n")
        status, out = self.run_with(make_report(0), 0, fixture=fixture)
        self.assertEqual(status, 1)
        self.assertIn("no result has status error", out)

    def test_a_missing_json_report_fails_and_shows_leakgate_stderr(self):
        os.environ["FAKE_NO_JSON"] = "1"
        status, out = self.run_with(make_report(1), 2, stderr="leakgate: no such option --frob\n")
        self.assertEqual(status, 1)
        self.assertIn("wrote no JSON report", out)
        self.assertIn("leakgate: no such option --frob", out)

    def test_a_report_whose_exit_code_disagrees_with_the_process_fails(self):
        status, out = self.run_with(make_report(0, [dsl_finding()]), 1)
        self.assertEqual(status, 1)
        self.assertIn("exit_code 0 but leakgate exited 1", out)

    def test_a_report_of_another_schema_fails(self):
        status, out = self.run_with(make_report(1, [dsl_finding()], schema="leakgate/0"), 1)
        self.assertEqual(status, 1)
        self.assertIn("schema", out)

    # -- skipping

    def test_a_missing_binary_skips_with_77(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = run_fixture.main(
                ["--leakgate", os.path.join(self.dir, "nope"), self.fixture()]
            )
        self.assertEqual(status, 77)
        self.assertIn("SKIP", out.getvalue())


class ParseFixtureTest(unittest.TestCase):
    def test_every_scan_fixture_parses_and_states_an_exit_code(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        scan = os.path.join(root, "fixtures", "scan")
        names = sorted(n for n in os.listdir(scan) if n.endswith(".py"))
        self.assertTrue(names)
        for name in names:
            with self.subTest(name):
                spec = run_fixture.parse_fixture(os.path.join(scan, name))
                for version in ((3, 10), (3, 11), (3, 12), (3, 13)):
                    self.assertIsNotNone(spec.for_python(version).exit_code,
                                         f"every scan fixture states its exit code on {version}")

    def test_properties_and_args_are_parsed(self):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(
                "# args: --timeout 3 --python '/opt/py 3/bin/python'\n"
                "#expect:   finding frame-cycle function=A.b local=x pins=c pins=d min-bytes=9\n"
            )
        try:
            spec = run_fixture.parse_fixture(handle.name)
        finally:
            os.unlink(handle.name)
        self.assertEqual(spec.args, ["--timeout", "3", "--python", "/opt/py 3/bin/python"])
        (exp,) = spec.expectations
        self.assertEqual(exp.kind, "frame-cycle")
        self.assertEqual(
            exp.props,
            [("function", "A.b"), ("local", "x"), ("pins", "c"), ("pins", "d"), ("min-bytes", "9")],
        )


if __name__ == "__main__":
    unittest.main()
