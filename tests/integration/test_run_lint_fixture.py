"""The lint fixture runner must be able to fail: checked with the rules alone (no binary) on
fixtures written here, right and wrong.

    python3 -m unittest -v test_run_lint_fixture
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_lint_fixture.py")
RULES = os.path.join(HERE, "..", "..", "lib", "lint", "python_rules")

LEAK = """\
    import inspect


    def kernel():
        cur_frame = inspect.currentframe()  # expect-lint: own-frame-local name=cur_frame{extra}
        return cur_frame.f_back
"""


def run(source):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fixture.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(source))
        proc = subprocess.run([sys.executable, RUNNER, "--rules", RULES, path],
                              capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout


class RunnerTest(unittest.TestCase):
    def test_a_met_expectation_passes(self):
        code, out = run(LEAK.format(extra=" function=kernel column=5"))
        self.assertEqual(code, 0, out)

    def test_a_wrong_property_fails(self):
        code, out = run(LEAK.format(extra=" function=other"))
        self.assertEqual(code, 1, out)
        self.assertIn("no finding for", out)

    def test_an_unexpected_finding_fails(self):
        source = LEAK.format(extra="").replace("# expect-lint: own-frame-local name=cur_frame",
                                               "# expect-lint: none")
        code, out = run(source)
        self.assertEqual(code, 1, out)
        self.assertIn("unexpected own-frame-local", out)

    def test_a_missing_finding_fails(self):
        code, out = run("x = 1  # expect-lint: frame-stored name=x\n")
        self.assertEqual(code, 1, out)

    def test_a_fixture_without_expectations_fails(self):
        code, out = run("x = 1\n")
        self.assertEqual(code, 1, out)
        self.assertIn("no `# expect-lint:` line", out)

    def test_an_unknown_property_fails(self):
        code, out = run("x = 1  # expect-lint: frame-stored colour=red\n")
        self.assertEqual(code, 1, out)
        self.assertIn("unknown property", out)

    def test_unparsed_is_checked(self):
        self.assertEqual(run("def broken(:\n# expect-lint: unparsed\n")[0], 0)
        self.assertEqual(run("x = 1\n# expect-lint: unparsed\n")[0], 1)


if __name__ == "__main__":
    unittest.main()
