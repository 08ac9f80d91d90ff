#!/usr/bin/env python3
"""The C/C++ lint with PyPI's `libclang` (a wheel's users have it where Debian's libclang is not):
found in the environment's site-packages (clang/native/libclang.so), and given clang's own headers
from GCC's, since that wheel ships none. Each fixtures/lint/cxx translation unit with findings must
give the same findings with it as with this build's libclang.

    test_lint_pypi_libclang.py --leakgate BUILD/leakgate

Makes a venv of this Python with `libclang` from PyPI under leakgate's cache; exit 77 (skip)
when PyPI cannot be reached and it is not cached, or the binary was built without libclang.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
LEAKGATE = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "fixtures", "lint", "cxx")
CACHE = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate")
VENV = os.path.join(CACHE, "venvs", "libclang-pypi-py%d.%d" % sys.version_info[:2])
VENV_PYTHON = os.path.join(VENV, "bin", "python")


def make_venv():
    """The venv with PyPI's libclang: its library's path, or None where it cannot be made."""
    library = subprocess.run([VENV_PYTHON, "-c", "import clang.native, os; print(os.path.join("
                              "os.path.dirname(clang.native.__file__), 'libclang.so'))"],
                             capture_output=True, text=True) if os.path.exists(VENV_PYTHON) else None
    if library and library.returncode == 0:
        return library.stdout.strip()
    subprocess.run([sys.executable, "-m", "venv", "--clear", VENV], check=True)
    install = subprocess.run([VENV_PYTHON, "-m", "pip", "install", "-q", "libclang"], capture_output=True,
                             text=True, timeout=600)
    if install.returncode != 0:
        print(f"skip: pip install libclang failed: {install.stderr[-500:]}")
        return None
    return make_venv()


def lint(path, **env):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lint.json")
        run = subprocess.run([LEAKGATE, "lint", "--no-config", "--json", out, "--python", VENV_PYTHON, path],
                             capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))
        with open(out) as f:
            report = json.load(f)
    return run.returncode, sorted((f["kind"], f["frames"][0]["line"]) for f in report["findings"]), report


class PypiLibclang(unittest.TestCase):
    def test_each_fixture_gives_the_same_findings_with_pypis_libclang(self):
        for name in ("frame_ref_leaked.c", "frame_stored_member.cpp", "frame_stored_static.c"):
            with self.subTest(name):
                path = os.path.join(FIXTURES, name)
                code, ours, _ = lint(path)
                self.assertEqual(code, 1)
                code, theirs, report = lint(path, LEAKGATE_LIBCLANG=LIBRARY)
                self.assertEqual(report["results"][0]["details"].get("unparsed"), [], report)
                self.assertEqual((code, theirs), (1, ours))

    def test_a_library_that_is_not_there_is_a_skip_naming_what_was_tried(self):
        code, _, report = lint(os.path.join(FIXTURES, "frame_ref_leaked.c"), LEAKGATE_LIBCLANG="/nonexistent/libclang.so")
        self.assertEqual(code, 0)
        reasons = " ".join(c["reason"] for r in report["results"] for c in r["checks"])
        self.assertIn("cannot load libclang: tried /nonexistent/libclang.so", reasons)
        self.assertIn("pip install libclang", reasons)


def main():
    global LEAKGATE, LIBRARY
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    options, rest = parser.parse_known_args()
    LEAKGATE = os.path.abspath(options.leakgate)
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return SKIP
    probe = subprocess.run([LEAKGATE, "lint", "--no-config", os.path.join(FIXTURES, "frame_ref_leaked.c")],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 1:
        print(f"skip: this build lints no C/C++ here (exit {probe.returncode})")
        return SKIP
    LIBRARY = make_venv()
    if not LIBRARY:
        return SKIP
    result = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
