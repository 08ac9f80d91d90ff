#!/usr/bin/env python3
"""The pinned DSL suites of suites.py under `pytest --leakgate`, held to expected.json (issue 44):
a test leakgate newly fails (a false alarm, or new retention in the pinned release: either way a
change to look at) or no longer fails (a lost finding) fails this check, as does a test whose
measurement became invalid or stopped being one.

    check_suites.py --wheel WHEEL [--python PY] [SUITE ...]

expected.json: per suite, the tests that fail (node id without the file's folder: a substring of
their culprits or violations that must appear) and the tests leakgate cannot measure (they collect
or freeze the heap themselves); every other measured test must be clean. Exit 0 when each suite is
as expected, 1 otherwise (the differences are printed).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suites  # noqa: E402

EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json")


def short(nodeid):
    """`test_struct.py::TestStruct::test_assign_view_cpu`: the id without its folders."""
    path, _, rest = nodeid.partition("::")
    return os.path.basename(path) + "::" + rest


def check(name, venv_python, expected):
    with tempfile.TemporaryDirectory(prefix="leakgate-suites-") as reports:
        cmd = suites.command(name, venv_python, "--leakgate", "--leakgate-report", reports)
        run = subprocess.run(cmd, env=suites.environment(name), capture_output=True, text=True,
                             cwd=suites.CACHE, timeout=1800)
        index_path = os.path.join(reports, "index.json")
        if not os.path.exists(index_path):
            return [f"{name}: pytest wrote no index (exit {run.returncode}): {run.stdout[-1500:]}{run.stderr[-1500:]}"]
        with open(index_path) as text:
            index = json.load(text)
    problems = []
    got = {short(test["nodeid"]): test for test in index["tests"]}
    want_failed = expected.get("failed", {})
    want_invalid = set(expected.get("invalid", []))
    for test, entry in sorted(got.items()):
        outcome = entry["outcome"]
        if outcome == "failed":
            if test not in want_failed:
                problems.append(f"{name}: {test} fails, not expected: {'; '.join(entry.get('violations', []))}")
                continue
            said = " ".join(entry.get("violations", []) + entry.get("culprits", []))
            if want_failed[test] not in said:
                problems.append(f"{name}: {test} fails without `{want_failed[test]}`: {said[:300]}")
        elif outcome == "invalid":
            if test not in want_invalid:
                problems.append(f"{name}: {test} could not be measured, not expected: {entry.get('error', '')[:300]}")
        elif test in want_failed:
            problems.append(f"{name}: {test} is {outcome}, expected to fail with `{want_failed[test]}` (a lost finding)")
        elif test in want_invalid:
            problems.append(f"{name}: {test} is {outcome}, expected to be unmeasurable")
    for test in sorted((set(want_failed) | want_invalid) - set(got)):
        problems.append(f"{name}: {test} was not measured at all")
    summary = index["summary"]
    if summary["clean"] == 0:  # nothing measured clean: the run measured nothing this check can hold
        problems.append(f"{name}: no test was measured clean ({summary['measured']} measured): not a measurement")
    print(f"{name}: {summary['measured']} measured, {summary['clean']} clean, {summary['failed']} failed "
          f"(expected {len(want_failed)}), {summary['invalid']} could not be measured (expected "
          f"{len(want_invalid)}), {summary['not_measured']} not measured")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("names", nargs="*", default=sorted(suites.SUITES))
    args = parser.parse_args()
    with open(EXPECTED) as text:
        expected = json.load(text)
    problems = []
    for name in args.names:
        venv_python = suites.prepare(name, args.wheel, args.python)
        problems += check(name, venv_python, expected[name])
    for problem in problems:
        print("  " + problem)
    print("suites: " + ("as expected" if not problems else f"{len(problems)} difference(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
