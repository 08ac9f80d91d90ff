#!/usr/bin/env python3
"""Benchmark (docs/notes/performance.md, P5): `leakgate lint` of C extension sources with Python.h
parsed once per command line (a precompiled header of the files' common opening) against parsed
for every file (`LEAKGATE_NO_PRECOMPILED_HEADER=1`).

    python3 bench/lint_cxx_bench.py --leakgate build/leakgate [--files 40] [--pairs 5] [PATH...]

Without PATHs the corpus is generated: FILES extension modules of a few dozen functions each, every
one opening as most do (`#define PY_SSIZE_T_CLEAN` then `#include <Python.h>`, a third without the
define), a quarter of them keeping a caller's frame so that there are findings to compare. With
PATHs those files are linted instead (real sources: see docs/notes/performance.md for the sdists used).
The two runs of a pair go one after the other, in fresh processes (interleaved pairs: a shared
machine's load falls on both), and each pair's JSON reports must hold the same findings and the same
files not parsed, or the benchmark fails. Printed: each side's seconds (median, min to max) and
the ratio of the pairs (median, min to max).

Standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FUNCTION = """
static PyObject *
call_{n}(PyObject *self, PyObject *args)
{{
    PyObject *callable = NULL, *value = NULL;
    Py_ssize_t count = {n};
    if (!PyArg_ParseTuple(args, "OO|n", &callable, &value, &count))
        return NULL;
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {{
        PyObject *item = PyObject_CallOneArg(callable, value);
        if (item == NULL || PyList_Append(list, item) < 0) {{
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }}
        Py_DECREF(item);
    }}
    return list;
}}
"""

KEEPS_FRAME = """
static PyFrameObject *last_caller_{n};

static PyObject *
remember_{n}(PyObject *self, PyObject *unused)
{{
    last_caller_{n} = PyEval_GetFrame();
    Py_RETURN_NONE;
}}
"""


def generate(directory, files, functions=30):
    paths = []
    for f in range(files):
        opening = "#include <Python.h>\n" if f % 3 == 2 else "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n"
        body = [f"/* Generated extension module {f}. */\n", opening]
        body += [FUNCTION.format(n=f * 1000 + i) for i in range(functions)]
        if f % 4 == 0:
            body.append(KEEPS_FRAME.format(n=f))
        path = os.path.join(directory, f"module_{f}.c")
        with open(path, "w") as out:
            out.write("".join(body))
        paths.append(path)
    return paths


def lint(leakgate, paths, report, precompiled):
    env = dict(os.environ)
    env.pop("LEAKGATE_NO_PRECOMPILED_HEADER", None)
    if not precompiled:
        env["LEAKGATE_NO_PRECOMPILED_HEADER"] = "1"
    start = time.perf_counter()
    done = subprocess.run([leakgate, "lint", "-q", "-j", "1", "--json", report, *paths], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"lint exited {done.returncode}")
    with open(report) as f:
        result = json.load(f)["results"][0]
    return seconds, result["findings"], result["details"].get("unparsed", [])


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("paths", nargs="*")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        paths = options.paths or generate(directory, options.files)
        report = os.path.join(directory, "report.json")
        on, off, ratios = [], [], []
        for _ in range(options.pairs):
            seconds_on, findings_on, unparsed_on = lint(options.leakgate, paths, report, True)
            seconds_off, findings_off, unparsed_off = lint(options.leakgate, paths, report, False)
            if findings_on != findings_off or unparsed_on != unparsed_off:
                sys.exit("the findings differ with and without the precompiled header")
            on.append(seconds_on)
            off.append(seconds_off)
            ratios.append(seconds_on / seconds_off)
        print(f"{len(paths)} files, {len(findings_on)} findings, {len(unparsed_on)} not parsed, "
              f"{options.pairs} pairs")
        print(f"Python.h parsed once per command line: {spread(on)} s")
        print(f"Python.h parsed for every file:        {spread(off)} s")
        print(f"ratio, pair by pair: {spread(ratios)}")


if __name__ == "__main__":
    main()
