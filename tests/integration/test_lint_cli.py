#!/usr/bin/env python3
"""`leakgate lint`'s command-line contract: usage errors, the JSON report, a list of files too
long for one worker's command line, and the C/C++ options (--compile-commands, --cxx-flag, -I).

    test_lint_cli.py --leakgate BUILD/leakgate

Exit 77 (skip) when the binary is missing.
"""

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import unittest

SKIP = 77
LEAKGATE = None
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "lint")


def lint(*args, env=None):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        proc = subprocess.run([LEAKGATE, "lint", "--json", out, "--quiet", *args],
                              capture_output=True, text=True, timeout=600,
                              env=None if env is None else dict(os.environ, **env))
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

    def test_cxx_files_alone_without_libclang_are_a_skip_not_a_pass(self):
        proc, report = lint(os.path.join(FIXTURES, "cxx"))
        checks = {c["name"]: c for c in report["checks"]}
        if "lint-cxx" not in checks:
            self.skipTest("this leakgate has libclang")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(checks["lint-cxx"]["status"], "skip")
        self.assertEqual(checks["lint"]["status"], "skip")
        self.assertIn("without libclang", checks["lint"]["reason"])

    def test_a_libclang_that_cannot_be_loaded_is_a_skip_with_the_reason(self):
        # libclang is loaded with dlopen only when a C/C++ file is linted ($LEAKGATE_LIBCLANG).
        proc, report = lint(os.path.join(FIXTURES, "cxx"), env={"LEAKGATE_LIBCLANG": "/nonexistent/libclang.so"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        checks = {c["name"]: c for c in report["checks"]}
        self.assertEqual(checks["lint"]["status"], "skip")
        self.assertEqual(checks["lint-cxx"]["status"], "skip")
        self.assertIn("libclang", checks["lint-cxx"]["reason"])

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

    def test_workers_at_the_same_time_give_the_findings_of_one_in_its_order(self):
        _, one = lint("-j", "1", FIXTURES)
        _, four = lint("-j", "4", FIXTURES)
        self.assertGreater(len(one["findings"]), 10)
        self.assertEqual(one["findings"], four["findings"])
        self.assertEqual(one["checks"], four["checks"])
        self.assertEqual(one["results"][0]["details"]["files"], four["results"][0]["details"]["files"])


# A frame kept in a static only when KEEP_FRAME is defined, through a header of its own.
CXX_SOURCE = textwrap.dedent("""\
    #include <Python.h>
    #include "frames_config.h"

    #ifdef KEEP_FRAME
    static PyFrameObject* last_frame;

    void remember(void) {
        last_frame = PyEval_GetFrame();
    }
    #endif
    """)


class LintCxxOptions(unittest.TestCase):
    """A translation unit that needs an include directory and a macro to show its one finding."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self.include = os.path.join(self.tmp, "include")
        os.makedirs(self.include)
        with open(os.path.join(self.include, "frames_config.h"), "w", encoding="utf-8") as handle:
            handle.write("#define FRAMES_CONFIG 1\n")
        self.source_dir = os.path.join(self.tmp, "src")
        os.makedirs(self.source_dir)
        self.source = os.path.join(self.source_dir, "frames.c")
        with open(self.source, "w", encoding="utf-8") as handle:
            handle.write(CXX_SOURCE)
        proc, report = lint(self.source)
        if any(c["name"] == "lint-cxx" and c["status"] == "skip" for c in report["checks"]):
            self.skipTest("this leakgate was built without libclang")

    def tearDown(self):
        self._tmp.cleanup()

    def unparsed(self, report):
        return report["results"][0]["details"]["unparsed"]

    def test_without_include_dir_the_file_is_not_parsed(self):
        proc, report = lint(self.source)
        # Not analysed is not clean: the run is an error (exit 3), with the file named.
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertEqual([u["file"] for u in self.unparsed(report)], [self.source])
        self.assertIn("frames_config.h", self.unparsed(report)[0]["message"])
        self.assertEqual(report["findings"], [])

    def test_include_dir_parses_it_and_without_the_macro_nothing_is_found(self):
        proc, report = lint("-I", self.include, self.source)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.unparsed(report), [])
        self.assertEqual(report["findings"], [])
        self.assertEqual(report["results"][0]["details"]["files"], 1)

    def test_cxx_flag_defines_the_macro(self):
        proc, report = lint("-I", self.include, "--cxx-flag=-DKEEP_FRAME", self.source)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual([(f["kind"], f["locals"], f["frames"][0]["line"]) for f in report["findings"]],
                         [("lint:frame-stored-static", ["last_frame"], 8)])

    def write_database(self, flags):
        database = os.path.join(self.tmp, "build", "compile_commands.json")
        os.makedirs(os.path.dirname(database), exist_ok=True)
        arguments = ["cc", *flags, "-I", self.include, "-I", sysconfig.get_paths()["include"],
                     "-c", self.source]
        with open(database, "w", encoding="utf-8") as handle:
            json.dump([{"directory": self.source_dir, "arguments": arguments, "file": self.source}],
                      handle)
        return database

    def test_compile_commands_file_and_directory_give_the_command_line(self):
        database = self.write_database(["-DKEEP_FRAME"])
        for given in (database, os.path.dirname(database)):
            with self.subTest(given=given):
                proc, report = lint("--compile-commands", given, self.source)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertEqual(self.unparsed(report), [])
                self.assertEqual([f["locals"] for f in report["findings"]], [["last_frame"]])
                self.assertEqual(report["results"][0]["details"]["cxx"]["compile_commands"],
                                 os.path.realpath(database))

    def test_the_database_command_wins_over_cxx_flags(self):
        # The database's command line (no KEEP_FRAME) is the file's own; --cxx-flag is for files
        # it does not list.
        database = self.write_database([])
        proc, report = lint("--compile-commands", database, "--cxx-flag=-DKEEP_FRAME", self.source)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.unparsed(report), [])
        self.assertEqual(report["findings"], [])

    def test_a_missing_compile_commands_is_a_usage_error(self):
        proc, report = lint("--compile-commands", os.path.join(self.tmp, "nowhere.json"), self.source)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("no such file or directory", proc.stderr)
        self.assertIsNone(report)


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
