#!/usr/bin/env python3
"""`leakgate lint` on C sources nested as deep as generated code nests: a 10,000-branch `else if`
chain and a 30,000-term sum (at file scope and in a function), linted in one run with a Python
file that has a known finding. libclang, or the walk of its AST, overflowed the stack of the
leakgate process on them, which died by SIGSEGV (exit 139) with no report and the Python finding
lost. Each translation unit is parsed in a child process now: the run must end with one of
leakgate's own exit codes, write its JSON report whole with the Python finding in it, and either
analyse each C file or list it as not analysed with what happened.

    test_lint_cxx_deep_sources.py --leakgate BUILD/leakgate

Every file is generated in a temporary directory, removed afterwards. Exit 77 (skip) when the
binary is missing, or built without libclang.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

SKIP = 77
LEAKGATE = None

# A frame kept in a static: found at the end of a deep file only if the walk got there.
STORE = "static PyFrameObject *last_frame;\n"
STORE_LINE = "    last_frame = PyEval_GetFrame();\n"

PYTHON_FINDING = textwrap.dedent("""\
    import inspect


    def kernel():
        cur_frame = inspect.currentframe()
        return cur_frame.f_lineno
    """)


def else_if_chain(branches):
    lines = ["#include <Python.h>\n", STORE, "int classify(int x) {\n", "    if (x == 0) return 0;\n"]
    lines += [f"    else if (x == {i}) return {i};\n" for i in range(1, branches)]
    lines += ["    else {\n", STORE_LINE, "    }\n", "    return -1;\n", "}\n"]
    return "".join(lines), len(lines) - 3


def long_sum_at_file_scope(terms):
    return "int x = " + "+".join(["1"] * terms) + ";\n", None


def long_sum_in_a_function(terms):
    text = ("#include <Python.h>\n" + STORE + "int total(void) {\n"
            "    int x = " + "+".join(["1"] * terms) + ";\n" + STORE_LINE + "    return x;\n}\n")
    return text, 5


class DeepSources(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def test_deep_c_files_lose_neither_the_run_nor_the_python_finding(self):
        # GIVEN the pathological C files, each with the line of its finding (None: it has none)
        sources = {}
        for name, (text, line) in {
            "else_if_chain.c": else_if_chain(10_000),
            "long_sum_global.c": long_sum_at_file_scope(30_000),
            "long_sum_local.c": long_sum_in_a_function(30_000),
        }.items():
            sources[self.write(name, text)] = line
        python = self.write("own_frame.py", PYTHON_FINDING)
        report_path = os.path.join(self.tmp, "lint.json")

        # WHEN they are linted in one run, with the Python file
        started = time.monotonic()
        proc = subprocess.run([LEAKGATE, "lint", "--json", report_path, "--quiet", *sources, python],
                              capture_output=True, text=True, timeout=900, cwd=self.tmp)
        seconds = time.monotonic() - started

        # THEN leakgate ended by itself, with a findings exit (the Python finding is there)
        self.assertGreaterEqual(proc.returncode, 0,
                                f"leakgate was killed by signal {-proc.returncode}: {proc.stderr[-2000:]}")
        self.assertEqual(proc.returncode, 1, proc.stderr[-2000:])
        with open(report_path, encoding="utf-8") as handle:
            report = json.load(handle)  # whole: it parses
        checks = {c["name"]: c for c in report["checks"]}
        if "lint-cxx" in checks:
            self.skipTest("this leakgate was built without libclang")
        self.assertEqual(checks["lint"]["status"], "fail")
        python_findings = [f for f in report["findings"] if f["frames"][0]["file"] == python]
        self.assertEqual([(f["kind"], f["locals"]) for f in python_findings],
                         [("lint:own-frame-local", ["cur_frame"])])

        details = report["results"][0]["details"]
        self.assertEqual(details["files"], len(sources) + 1)
        unparsed = {entry["file"]: entry for entry in details["unparsed"]}
        self.assertLessEqual(set(unparsed), set(sources))
        for source, line in sources.items():
            with self.subTest(source=os.path.basename(source)):
                found = [f["frames"][0]["line"] for f in report["findings"]
                         if f["frames"][0]["file"] == source]
                if source in unparsed:
                    # Not analysed: said so, for that file, and nothing claimed about it.
                    self.assertTrue(unparsed[source]["message"])
                    self.assertEqual(found, [])
                else:
                    # Analysed: to its end.
                    self.assertEqual(found, [] if line is None else [line])
        print(f"\n{len(sources)} deep C files and 1 Python file linted in {seconds:.1f} s, exit "
              f"{proc.returncode}; not analysed: "
              f"{ {os.path.basename(f): e['message'] for f, e in unparsed.items()} or 'none'}",
              file=sys.stderr)


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
    if result.wasSuccessful() and result.skipped and not result.testsRun - len(result.skipped):
        return SKIP
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
