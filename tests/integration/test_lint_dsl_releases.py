#!/usr/bin/env python3
"""`leakgate lint` on the real CuTe DSL sources: nvidia-cutlass-dsl 4.6.1 binds the decorators'
own frame to a local (`cur_frame`, `current_frame`) and must be flagged there; 4.4.2 takes its
caller's frame in one expression (`inspect.currentframe().f_back`) and must not be. Both keep
the decorator's wrapper in a closure cycle (closure-cycle).

    test_lint_dsl_releases.py --leakgate BUILD/leakgate

Reads the sources of the venvs `leakgate bisect` caches (LEAKGATE_CACHE_DIR, default
~/.cache/leakgate/venvs/nvidia-cutlass-dsl-VERSION-pyX.Y); nothing is imported or run. Exit 77
(skip) when the binary or either venv is missing.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
LEAKGATE = None


def package_dir(version):
    cache = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate")
    name = "nvidia-cutlass-dsl-%s-py%d.%d" % (version, *sys.version_info[:2])
    venv = os.path.join(cache, "venvs", name)
    found = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "nvidia_cutlass_dsl"))
    return found[0] if found else None


def lint(path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        proc = subprocess.run([LEAKGATE, "lint", "--json", out, "--quiet", path],
                              capture_output=True, text=True, timeout=600)
        with open(out, encoding="utf-8") as handle:
            return proc.returncode, json.load(handle)


def culprits(report):
    """(rule, function, file, local) of every finding."""
    return [(f["kind"], f["frames"][0]["function"], f["frames"][0]["file"], f["locals"][0])
            for f in report["findings"]]


class CuteReleases(unittest.TestCase):
    def test_4_6_1_is_flagged_at_its_decorators(self):
        code, report = lint(package_dir("4.6.1"))
        self.assertEqual(code, 1, report["checks"])
        self.assertEqual(report["checks"][0]["name"], "lint")
        self.assertEqual(report["checks"][0]["status"], "fail")
        found = culprits(report)
        expected = [("CuTeDSL.kernel", "cutlass_dsl/cutlass.py", "current_frame"),
                    ("BaseDSL.jit", "base_dsl/dsl.py", "cur_frame"),
                    ("BaseDSL.kernel", "base_dsl/dsl.py", "cur_frame")]
        for function, file, local in expected:
            with self.subTest(function=function):
                self.assertTrue(any(kind == "lint:own-frame-local" and name == function
                                    and path.endswith(file) and names == local
                                    for kind, name, path, names in found), found)
        # The decorators' lines are where the incident report puts them.
        lines = {(f["frames"][0]["function"], f["frames"][0]["line"]) for f in report["findings"]}
        self.assertIn(("BaseDSL.jit", 896), lines)
        self.assertIn(("BaseDSL.kernel", 906), lines)
        self.assertIn(("CuTeDSL.kernel", 1596), lines)
        print(f"\n4.6.1: {len(found)} findings: " + "; ".join(f"{n} `{l}`" for _, n, _, l in found),
              file=sys.stderr)

    def test_4_4_2_is_not_flagged_for_taking_its_callers_frame(self):
        root = package_dir("4.4.2")
        code, report = lint(root)
        self.assertEqual(report["checks"][0]["name"], "lint")
        # Every `inspect.currentframe().f_back` of the release, and what lint says there.
        sites = set()
        for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, text in enumerate(handle, start=1):
                    if re.search(r"inspect\.currentframe\(\)\.f_back", text):
                        sites.add((os.path.realpath(path), number))
        self.assertGreaterEqual(len(sites), 3, "the 4.4.2 decorators' pattern was not found")
        flagged = {(os.path.realpath(f["frames"][0]["file"]), f["frames"][0]["line"])
                   for f in report["findings"]}
        self.assertEqual(sites & flagged, set())
        decorators = [c for c in culprits(report) if c[1].endswith((".jit", ".kernel"))]
        self.assertEqual(decorators, [])
        print(f"\n4.4.2: {len(report['findings'])} findings, exit {code}", file=sys.stderr)

    def test_both_releases_leave_the_jit_wrapper_in_a_closure_cycle(self):
        # `jit_runner_decorator`'s `jit_wrapper` reads its own name and is given a
        # `set_name_prefix` that captures it: a cycle per decorated function, in both releases;
        # `slice_`'s recursive `lift_slice`, a cycle per call. Both found by closure-cycle.
        for version in ("4.4.2", "4.6.1"):
            with self.subTest(version=version):
                _, report = lint(package_dir(version))
                found = {(function, os.path.basename(path), local)
                         for kind, function, path, local in culprits(report)
                         if kind == "lint:closure-cycle"}
                decorator = "BaseDSL.jit_runner.<locals>.jit_runner_decorator"
                self.assertIn((decorator, "dsl.py", "jit_wrapper"), found)
                self.assertIn((decorator, "dsl.py", "jit_wrapper.set_name_prefix"), found)
                self.assertIn(("slice_", "core.py", "lift_slice"), found)


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
    missing = [v for v in ("4.4.2", "4.6.1") if package_dir(v) is None]
    if missing:
        print(f"skip: no cached venv for nvidia-cutlass-dsl {', '.join(missing)}")
        return SKIP
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
