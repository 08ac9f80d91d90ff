#!/usr/bin/env python3
"""`leakgate lint --fix` and `--diff`, and the SARIF `fixes`: on copies in a temporary directory,
never on the fixtures themselves.

    test_lint_fix.py --leakgate BUILD/leakgate

GIVEN a copy of fixtures/lint_fix/shapes.py (each shape the lint has an edit for, and some it has
none for), WHEN `lint --fix` runs on it, THEN the copy becomes shapes.fixed.py, the diff printed
is the one that turns the one into the other, the findings fixed are gone from a second lint and
the others stay; without --fix (or with --diff) nothing on disk changes; SARIF carries the same
edits as `fixes`. Then the same on a copy of nvidia-cutlass-dsl 4.4.2's base_dsl/dsl.py where
`leakgate bisect`'s venv of it is cached (skipped otherwise).

Exit 77 (skip) when the binary is missing.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
LEAKGATE = None
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "lint_fix")
FIXED_RULES = {"lint:own-frame-local", "lint:closure-cycle"}


def run(*args, cwd=None):
    return subprocess.run([LEAKGATE, "lint", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def lint_json(path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        proc = run("--json", out, "--quiet", path)
        with open(out, encoding="utf-8") as handle:
            return proc, json.load(handle)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def keys(report):
    return sorted((f["kind"], f["frames"][0]["function"], f["locals"][0])
                  for f in report["findings"])


def apply_patch(directory, diff):
    """The diff applied by patch(1), as a reader of --diff would."""
    return subprocess.run(["patch", "-p1", "--quiet"], input=diff, text=True, cwd=directory,
                          capture_output=True)


class LintFix(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.copy = os.path.join(self.tmp, "shapes.py")
        shutil.copyfile(os.path.join(FIXTURES, "shapes.py"), self.copy)
        self.before = read(self.copy)
        self.expected = read(os.path.join(FIXTURES, "shapes.fixed.py"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_without_fix_nothing_on_disk_changes(self):
        proc = run("--quiet", self.copy)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(read(self.copy), self.before)
        self.assertEqual(os.listdir(self.tmp), ["shapes.py"])

    def test_diff_prints_the_fix_and_writes_nothing(self):
        proc = run("--diff", "--quiet", "shapes.py", cwd=self.tmp)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(proc.stdout.startswith("--- a/shapes.py\n+++ b/shapes.py\n@@ "), proc.stdout)
        self.assertEqual(read(self.copy), self.before)
        # The diff is the fix: patch(1) makes the fixed file of it.
        if shutil.which("patch"):
            patched = apply_patch(self.tmp, proc.stdout)
            self.assertEqual(patched.returncode, 0, patched.stderr)
            self.assertEqual(read(self.copy), self.expected)

    def test_fix_writes_the_fixed_file_and_the_findings_it_fixes_are_gone(self):
        _, before = lint_json(self.copy)
        proc = run("--fix", "--quiet", "shapes.py", cwd=self.tmp)
        self.assertEqual(read(self.copy), self.expected)
        self.assertIn("+        try:\n", proc.stdout)
        self.assertIn("+            cur_frame = None\n", proc.stdout)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["shapes.py"])  # no copy left beside it
        # What is left: the findings without an edit, and the exit code says so.
        self.assertEqual(proc.returncode, 1, proc.stderr)
        _, after = lint_json(self.copy)
        unfixed = [k for k in keys(before)
                   if not any(f.get("fix_edits") for f in before["findings"]
                              if (f["kind"], f["frames"][0]["function"], f["locals"][0]) == k)]
        self.assertEqual(keys(after), unfixed)
        self.assertEqual({k[0] for k in unfixed}, {"lint:frame-stored", "lint:closure-cycle"})
        fixed = [f for f in before["findings"] if f.get("fix_edits")]
        self.assertEqual(len(fixed), 6)
        self.assertTrue(all(f["kind"] in FIXED_RULES for f in fixed))
        # Once fixed, there is nothing more to fix.
        again = run("--fix", "--quiet", self.copy)
        self.assertEqual(again.stdout, "")
        self.assertEqual(read(self.copy), self.expected)

    def test_the_fixed_file_runs_as_the_original(self):
        results = []
        for path in (os.path.join(FIXTURES, "shapes.py"), os.path.join(FIXTURES, "shapes.fixed.py")):
            code = ("import importlib.util, sys\n"
                    f"spec = importlib.util.spec_from_file_location('m', {path!r})\n"
                    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                    "class A:\n ndim = 2; shape = (2, 3)\n def __getitem__(self, i): return sum(i)\n"
                    "print(m.DSL.kernel(1)[1], m.DSL.kernel()[0], m.format_array(A(), ','),"
                    " m.factorial(5), m.outer() > 0)\n"
                    "try:\n m.reraise_later(lambda: int('x'))\nexcept ValueError as e:\n print(e)\n")
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            results.append(proc.stdout)
        self.assertEqual(results[0], results[1])

    def test_sarif_carries_the_fixes(self):
        sarif_path = os.path.join(self.tmp, "lint.sarif")
        proc = run("--sarif", sarif_path, "--quiet", self.copy)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(read(self.copy), self.before)
        with open(sarif_path, encoding="utf-8") as handle:
            sarif = json.load(handle)
        results = sarif["runs"][0]["results"]
        with_fixes = [r for r in results if "fixes" in r]
        self.assertEqual(len(with_fixes), 6)
        self.assertTrue(all(r["ruleId"] in FIXED_RULES for r in with_fixes))
        # The replacements, made by hand as a SARIF consumer would, give the fixed file.
        lines = self.before.split("\n")
        edits = {}
        for result in with_fixes:
            (fix,) = result["fixes"]
            self.assertTrue(fix["description"]["text"])
            (change,) = fix["artifactChanges"]
            self.assertTrue(change["artifactLocation"]["uri"].endswith("shapes.py"))
            for replacement in change["replacements"]:
                region = replacement["deletedRegion"]
                self.assertEqual(region["startColumn"], 1)
                key = (region["startLine"], region["endLine"], region["endColumn"])
                edits[key] = replacement["insertedContent"]["text"]
        for (start, end, end_column), text in sorted(edits.items(), reverse=True):
            self.assertEqual(end_column, len(lines[end - 1]) + 1)
            lines[start - 1:end] = text.split("\n")
        self.assertEqual("\n".join(lines), self.expected)

    def test_a_directory_given_is_fixed_and_a_file_beside_it_is_not(self):
        inside = os.path.join(self.tmp, "pkg")
        os.mkdir(inside)
        shutil.move(self.copy, os.path.join(inside, "shapes.py"))
        beside = os.path.join(self.tmp, "beside.py")
        shutil.copyfile(os.path.join(FIXTURES, "shapes.py"), beside)
        proc = run("--fix", "--quiet", inside)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(read(os.path.join(inside, "shapes.py")), self.expected)
        self.assertEqual(read(beside), self.before)


class LintFixOnRealCode(unittest.TestCase):
    def test_cutlass_dsl_base_dsl_fixed_copy_lints_clean_for_what_was_fixed(self):
        cache = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate")
        venv = os.path.join(cache, "venvs", "nvidia-cutlass-dsl-4.4.2-py%d.%d" % sys.version_info[:2])
        found = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "nvidia_cutlass_dsl",
                                       "python_packages", "cutlass", "base_dsl", "dsl.py"))
        if not found:
            self.skipTest(f"no cached nvidia-cutlass-dsl 4.4.2 venv at {venv}")
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "dsl.py")
            shutil.copyfile(found[0], copy)
            original = read(copy)
            _, before = lint_json(copy)
            fixable = [f for f in before["findings"] if f.get("fix_edits")]
            self.assertTrue(fixable, "expected a finding with an edit in base_dsl/dsl.py")
            proc = run("--fix", "--quiet", copy)
            self.assertNotIn("not fixed", proc.stderr)
            self.assertNotEqual(read(copy), original)
            compile(read(copy), copy, "exec")
            _, after = lint_json(copy)
            fixed = {(f["kind"], f["frames"][0]["function"], f["locals"][0]) for f in fixable}
            self.assertFalse(fixed & set(keys(after)), keys(after))
            self.assertTrue(set(keys(after)) <= set(keys(before)))
            print(f"\nbase_dsl/dsl.py: {len(before['findings'])} findings, {len(fixable)} fixed: "
                  f"{sorted(fixed)}", file=sys.stderr)


def main():
    global LEAKGATE
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--leakgate":
        LEAKGATE = os.path.abspath(args[1])
        args = args[2:]
    if not LEAKGATE or not os.access(LEAKGATE, os.X_OK):
        print(f"skipped: no leakgate binary at {LEAKGATE}")
        return SKIP
    program = unittest.main(argv=[sys.argv[0], "-v", *args], exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
