#!/usr/bin/env python3
"""`leakgate lint` in a real project: `leakgate: ignore` comments, --select and --ignore, --exclude,
the `[tool.leakgate.lint]` table of pyproject.toml, and the C/C++ headers under site-packages.

    test_lint_project.py --leakgate BUILD/leakgate

Each test writes a small project into a temporary directory and runs the binary on it.
Exit 77 (skip) when the binary is missing.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SKIP = 77
LEAKGATE = None

# Two findings, one per Python rule: `own-frame-local` at line 5 (`frame` still bound at the
# return), `frame-stored` at line 9 (the frame on an attribute).
LEAKS = textwrap.dedent("""\
    import inspect
    import sys

    def kernel(fn):
        frame = inspect.currentframe(){own}
        return fn

    def jit(fn):
        fn.frame = sys._getframe(){stored}
        return fn
    """)

CLEAN = "def add(a, b):\n    return a + b\n"

# A C extension's header that keeps a frame in a static: a `frame-stored-static` finding wherever
# it is read.
HEADER = textwrap.dedent("""\
    #include <Python.h>
    static PyFrameObject *saved;
    static inline void keep(void) { saved = PyEval_GetFrame(); Py_XINCREF(saved); }
    """)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def leaks(own="", stored=""):
    return LEAKS.format(own=own, stored=stored)


def lint(*args, cwd=None):
    """(process, report): `leakgate lint --json ... ARGS` run in `cwd`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        proc = subprocess.run([LEAKGATE, "lint", "--json", out, *args], capture_output=True, text=True,
                              timeout=600, cwd=cwd)
        report = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as handle:
                report = json.load(handle)
        return proc, report


def rules_found(report):
    return sorted((os.path.basename(f["frames"][0]["file"]), f["frames"][0]["line"], f["kind"][len("lint:"):])
                  for f in report["findings"])


def details(report):
    return report["results"][0]["details"]


class Suppressions(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_without_comments_both_rules_find(self):
        path = write(self.root, "dsl.py", leaks())
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(rules_found(report), [("dsl.py", 5, "own-frame-local"), ("dsl.py", 9, "frame-stored")])

    def test_an_ignore_comment_accepts_the_finding_on_its_line_only(self):
        path = write(self.root, "dsl.py", leaks(own="  # leakgate: ignore"))
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(rules_found(report), [("dsl.py", 9, "frame-stored")])
        accepted = details(report)["suppressed"]
        self.assertEqual([{k: v for k, v in entry.items() if k != "finding"} for entry in accepted],
                         [{"file": path, "line": 5, "rule": "own-frame-local", "comment": "line"}])
        # the finding whole, for SARIF's suppressed results
        self.assertEqual(accepted[0]["finding"]["kind"], "lint:own-frame-local")
        self.assertEqual(accepted[0]["finding"]["frames"][0]["line"], 5)
        self.assertIn("1 finding accepted by `leakgate: ignore` comments", report["checks"][0]["reason"])

    def test_a_rule_list_accepts_only_its_rules(self):
        path = write(self.root, "dsl.py", leaks(own="  # leakgate: ignore[frame-stored]",
                                               stored="  # noqa  # leakgate: ignore[own-frame-local, frame-stored]"))
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(rules_found(report), [("dsl.py", 5, "own-frame-local")])

    def test_every_finding_accepted_passes(self):
        path = write(self.root, "dsl.py", leaks(own="  # leakgate: ignore[own-frame-local]",
                                               stored="  # leakgate: ignore"))
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(report["checks"][0]["status"], "pass")
        self.assertEqual(len(details(report)["suppressed"]), 2)

    def test_ignore_file_accepts_the_whole_file(self):
        path = write(self.root, "dsl.py", "# leakgate: ignore-file[frame-stored]\n" + leaks())
        proc, report = lint(path)
        self.assertEqual(rules_found(report), [("dsl.py", 6, "own-frame-local")])
        path = write(self.root, "dsl.py", leaks() + "# leakgate: ignore-file\n")
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({s["comment"] for s in details(report)["suppressed"]}, {"file"})

    def test_a_comment_naming_no_rule_is_a_warning_and_accepts_nothing(self):
        path = write(self.root, "dsl.py", leaks(own="  # leakgate: ignore[own-frame-locals]"))
        proc, report = lint(path)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(len(report["findings"]), 2)
        self.assertIn("names no rule `own-frame-locals` (did you mean `own-frame-local`?)", proc.stderr)
        self.assertEqual(len(details(report)["suppression_warnings"]), 1)

    def test_text_that_is_not_a_comment_accepts_nothing(self):
        path = write(self.root, "dsl.py", leaks(own="; note = 'leakgate: ignore'",
                                               stored="  # leakgate: ignored"))
        proc, report = lint(path)
        self.assertEqual(len(report["findings"]), 2, report["findings"])

    def test_a_cxx_comment_accepts_a_cxx_finding(self):
        write(self.root, "ext/keep.h", HEADER)
        proc, report = lint(os.path.join(self.root, "ext"))
        if report and any(c["name"] == "lint-cxx" for c in report["checks"]):
            self.skipTest("this build has no libclang")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual([k for _, _, k in rules_found(report)], ["frame-stored-static"])
        write(self.root, "ext/keep.h", HEADER.replace("Py_XINCREF(saved); }",
                                                      "Py_XINCREF(saved); } // leakgate: ignore[frame-stored-static]"))
        proc, report = lint(os.path.join(self.root, "ext"))
        self.assertEqual(proc.returncode, 0, proc.stderr + json.dumps(report["findings"]))


class RuleSelection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = write(self.tmp.name, "dsl.py", leaks())

    def tearDown(self):
        self.tmp.cleanup()

    def test_select_keeps_only_its_rules(self):
        proc, report = lint("--select", "frame-stored", self.path)
        self.assertEqual(rules_found(report), [("dsl.py", 9, "frame-stored")])
        self.assertEqual(details(report)["rules"], ["frame-stored"])

    def test_ignore_drops_its_rules(self):
        proc, report = lint("--ignore", "frame-stored,frame-ref-leaked", self.path)
        self.assertEqual(rules_found(report), [("dsl.py", 5, "own-frame-local")])
        self.assertNotIn("frame-stored", details(report)["rules"])

    def test_an_unknown_rule_is_a_usage_error_with_the_closest(self):
        proc, report = lint("--select", "frame-stord", self.path)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--select: no rule `frame-stord` (did you mean `frame-stored`?)", proc.stderr)
        self.assertIsNone(report)

    def test_no_rule_left_is_a_usage_error(self):
        proc, report = lint("--select", "frame-stored", "--ignore", "frame-stored", self.path)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("leave no rule to check", proc.stderr)


class Excludes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        write(self.root, "src/dsl.py", leaks())
        write(self.root, "src/gen/dsl_pb2.py", leaks())
        write(self.root, "tests/test_dsl.py", leaks())
        write(self.root, "src/ok.py", CLEAN)

    def tearDown(self):
        self.tmp.cleanup()

    def files_with_findings(self, report):
        return sorted({os.path.relpath(f["frames"][0]["file"], self.root) for f in report["findings"]})

    def test_a_name_glob_excludes_any_component(self):
        proc, report = lint("--exclude", "tests", "--exclude", "*_pb2.py", ".", cwd=self.root)
        self.assertEqual(self.files_with_findings(report), ["src/dsl.py"])
        self.assertEqual(details(report)["files"], 2)
        self.assertEqual(details(report)["excluded"], 2)
        self.assertIn("2 paths excluded", report["checks"][0]["reason"])

    def test_a_glob_with_a_slash_is_anchored_at_the_current_directory(self):
        proc, report = lint("--exclude", "src/gen", "--exclude", "gen/*", ".", cwd=self.root)
        self.assertEqual(self.files_with_findings(report), ["src/dsl.py", "tests/test_dsl.py"])

    def test_excludes_apply_to_files_named_and_all_excluded_is_a_skip(self):
        proc, report = lint("--exclude", "tests/*", "tests/test_dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(report["checks"][0]["status"], "skip")
        self.assertIn("no file checked; 1 path excluded", report["checks"][0]["reason"])


class ProjectFile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        write(self.root, "pkg/dsl.py", leaks())
        write(self.root, "pkg/vendor/old.py", leaks())

    def tearDown(self):
        self.tmp.cleanup()

    def project(self, table):
        write(self.root, "pyproject.toml", "[project]\nname = 'demo'\n\n" + textwrap.dedent(table))

    def test_the_nearest_pyproject_is_read_from_a_subdirectory(self):
        self.project("""\
            [tool.leakgate.lint]
            select = ["own-frame-local"]
            exclude = ["pkg/vendor"]
            """)
        proc, report = lint("dsl.py", cwd=os.path.join(self.root, "pkg"))
        self.assertEqual(rules_found(report), [("dsl.py", 5, "own-frame-local")])
        self.assertEqual(details(report)["config"], os.path.join(self.root, "pyproject.toml"))
        proc, report = lint("pkg", cwd=self.root)
        self.assertEqual(details(report)["files"], 1)
        self.assertEqual(details(report)["excluded"], 1)

    def test_the_command_line_adds_to_and_replaces_the_table(self):
        self.project("""\
            [tool.leakgate.lint]
            ignore = ["frame-stored"]
            """)
        proc, report = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(rules_found(report), [("dsl.py", 5, "own-frame-local")])
        proc, report = lint("--ignore", "own-frame-local", "pkg/dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc, report = lint("--no-config", "pkg/dsl.py", cwd=self.root)
        self.assertEqual(len(report["findings"]), 2)
        self.assertIsNone(details(report)["config"])

    def test_an_explicit_config_is_read(self):
        other = write(self.root, "elsewhere/pyproject.toml", '[tool.leakgate.lint]\nselect = ["frame-stored"]\n')
        proc, report = lint("--config", other, "pkg/dsl.py", cwd=self.root)
        self.assertEqual(rules_found(report), [("dsl.py", 9, "frame-stored")])

    def test_an_unknown_key_names_its_place_and_the_closest(self):
        self.project("""\
            [tool.leakgate.lint]
            selct = ["frame-stored"]
            """)
        proc, report = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("pyproject.toml:5:1: [tool.leakgate.lint] has no key `selct` (did you mean `select`?)",
                      proc.stderr)
        self.assertIsNone(report)

    def test_a_wrong_type_and_an_unknown_rule_are_usage_errors(self):
        self.project("""\
            [tool.leakgate.lint]
            exclude = "vendor"
            """)
        proc, _ = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("exclude: expected an array of strings", proc.stderr)
        self.project("""\
            [tool.leakgate.lint]
            ignore = ["frame-kept"]
            """)
        proc, _ = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no rule `frame-kept`", proc.stderr)

    def test_toml_that_does_not_parse_is_a_usage_error(self):
        self.project("""\
            [tool.leakgate.lint
            select = []
            """)
        proc, _ = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("pyproject.toml:4:", proc.stderr)
        self.assertIn("not TOML", proc.stderr)

    def test_a_pyproject_without_the_table_changes_nothing(self):
        self.project("[tool.black]\nline-length = 100\n")
        proc, report = lint("pkg/dsl.py", cwd=self.root)
        self.assertEqual(len(report["findings"]), 2)
        self.assertIsNone(details(report)["config"])


class SitePackagesHeaders(unittest.TestCase):
    def test_headers_a_package_ships_are_not_read_unless_asked(self):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "venv", "lib", "python3.11", "site-packages", "dsl")
            write(package, "__init__.py", CLEAN)
            write(package, "include/keep.h", HEADER)
            proc, report = lint(package)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(details(report)["site_packages_headers"], 1)
            self.assertEqual(details(report)["files"], 1)
            self.assertIn("1 header under site-packages not read", report["checks"][0]["reason"])
            proc, report = lint("--site-packages-headers", package)
            if any(c["name"] == "lint-cxx" for c in report["checks"]):
                return  # no libclang in this build: the header is skipped with the reason
            self.assertEqual(details(report)["site_packages_headers"], 0)
            self.assertEqual([k for _, _, k in rules_found(report)], ["frame-stored-static"])
            # Named on the command line, a header is read.
            proc, report = lint(os.path.join(package, "include", "keep.h"))
            self.assertEqual([k for _, _, k in rules_found(report)], ["frame-stored-static"])


def main():
    global LEAKGATE
    args = sys.argv[1:]
    if "--leakgate" in args:
        index = args.index("--leakgate")
        LEAKGATE = os.path.abspath(args[index + 1])
        del args[index:index + 2]
    if not LEAKGATE or not os.access(LEAKGATE, os.X_OK):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return SKIP
    program = unittest.main(argv=[sys.argv[0], *args], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
