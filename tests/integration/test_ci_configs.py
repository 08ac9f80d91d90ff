#!/usr/bin/env python3
"""The shipped CI configurations (.github/workflows/release-history.yml, .gitlab-ci.yml) against
GitHub's and GitLab's published schemas, as check-jsonschema vendors them (from PyPI, in a venv
kept in leakgate's cache), and every leakgate option they use against the real CLI's --help.

    test_ci_configs.py --leakgate BUILD/leakgate
Neither file can be run from here (no runner is reachable); this is what can be checked. Exit 77
(skip) with the reason when check-jsonschema cannot be installed (no PyPI).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tool_venv import tool_venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CONFIGS = {
    os.path.join(ROOT, ".github", "workflows", "release-history.yml"): "vendor.github-workflows",
    os.path.join(ROOT, ".gitlab-ci.yml"): "vendor.gitlab-ci",
}
LEAKGATE = None
CHECKER = None


def tool():
    """check-jsonschema; (None, why) when pip fails."""
    directory, why = tool_venv("check-jsonschema")
    return (os.path.join(directory, "bin", "check-jsonschema"), "") if directory else (None, why)


def validate(path, schema):
    return subprocess.run([CHECKER, "--builtin-schema", schema, path], capture_output=True, text=True, timeout=120)


def help_options(*subcommand):
    text = subprocess.run([LEAKGATE, *subcommand, "--help"], capture_output=True, text=True, timeout=60).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b", text))


class Configs(unittest.TestCase):
    def test_each_is_valid_against_its_published_schema(self):
        for path, schema in CONFIGS.items():
            with self.subTest(config=os.path.relpath(path, ROOT)):
                run = validate(path, schema)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_the_validation_can_fail(self):
        broken = {"vendor.github-workflows": "on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    stepz: []\n",
                  "vendor.gitlab-ci": "job:\n  script: 3\n  parallel:\n    matrix: nope\n"}
        with tempfile.TemporaryDirectory() as work:
            for schema, text in broken.items():
                path = os.path.join(work, "broken.yml")
                with open(path, "w") as out:
                    out.write(text)
                self.assertNotEqual(validate(path, schema).returncode, 0, schema)

    def test_every_leakgate_option_they_use_exists(self):
        for path in CONFIGS:
            with open(path) as config:
                text = config.read().replace("\\\n", " ")
            uses = re.findall(r"build/leakgate (bisect|merge)([^|\n]*)", text)
            self.assertGreaterEqual(len(uses), 2, path)
            for subcommand, arguments in uses:
                with self.subTest(config=os.path.basename(path), subcommand=subcommand):
                    used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-j)\b", arguments))
                    self.assertTrue(used)
                    self.assertLessEqual(used, help_options(subcommand))


def main():
    global LEAKGATE, CHECKER
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = os.path.abspath(args.leakgate)
    if not os.path.exists(LEAKGATE):
        print("skip: no leakgate binary")
        return 77
    CHECKER, why = tool()
    if CHECKER is None:
        print(f"skip: check-jsonschema could not be installed from PyPI: {why}")
        return 77
    result = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
