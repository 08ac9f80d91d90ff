#!/usr/bin/env python3
"""Bash completion (share/completion/leakgate.bash), run in a real bash against the real CLI.

    test_completion.py --leakgate BUILD/leakgate
Every option `leakgate X --help` lists completes, and nothing else; the check names complete
from the gate's own list (the one its usage error prints); subcommands and values complete.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.normpath(os.path.join(HERE, "..", "..", "share", "completion", "leakgate.bash"))
LEAKGATE = None


def complete(*words):
    """What bash offers for the command line `leakgate WORDS` (the last word is being typed)."""
    words = ["leakgate", *words]
    quoted = " ".join("'" + word.replace("'", "'\\''") + "'" for word in words)
    program = (f"source '{SCRIPT}'; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
               "_leakgate; printf '%s\\n' \"${COMPREPLY[@]}\"")
    run = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                         text=True, timeout=60, cwd=HERE)
    if run.returncode != 0:
        raise AssertionError(run.stderr)
    return set(filter(None, run.stdout.split("\n")))


def help_options(*subcommand):
    text = subprocess.run([LEAKGATE, *subcommand, "--help"], capture_output=True, text=True,
                          timeout=60).stdout
    options = set()
    for line in text.splitlines():
        match = re.match(r"^\s+((?:-[A-Za-z],)?--[a-z][a-z-]*|-[A-Za-z])\b", line)
        if match:
            options.update(match.group(1).split(","))
    return options


class Completion(unittest.TestCase):
    def test_it_registers_for_both_commands(self):
        run = subprocess.run(["bash", "--norc", "-c", f"source '{SCRIPT}'; complete -p leakgate leakgate-dsl"],
                             capture_output=True, text=True, timeout=60)
        self.assertIn("-F _leakgate leakgate", run.stdout)
        self.assertIn("-F _leakgate leakgate-dsl", run.stdout)

    def test_every_option_of_every_subcommand_and_no_other(self):
        global_options = {"-h", "--help", "-v", "--verbose", "--version"}
        for subcommand in ("scan", "gate", "lint", "bisect", "merge", "repro"):
            with self.subTest(subcommand=subcommand):
                expected = help_options(subcommand) | global_options
                self.assertEqual(complete(subcommand, "-"), expected)
        for nested in ("list", "prune"):
            with self.subTest(subcommand=f"cache {nested}"):
                self.assertEqual(complete("cache", nested, "-"), help_options("cache", nested))

    def test_subcommands_and_values(self):
        self.assertEqual(complete("ga"), {"gate"})
        self.assertTrue({"scan", "gate", "lint", "bisect", "merge", "repro", "cache"} <= complete(""))
        self.assertEqual(complete("cache", ""), {"list", "prune", "-h", "--help"})
        self.assertEqual(complete("gate", "--color", ""), {"auto", "always", "never"})
        self.assertEqual(complete("gate", "--checks", "decorate-s"), {"decorate-sentinels"})
        self.assertEqual(complete("gate", "--checks", "import,soak"), {"import,soak", "import,soak-growth"})
        self.assertIn("reference", complete("bisect", "--target", "re"))

    def test_the_check_names_are_the_gates_own(self):
        error = subprocess.run([LEAKGATE, "gate", "--checks", "no-such-check"], capture_output=True,
                               text=True, timeout=60).stderr
        listed = re.search(r"the gate's checks are (.*) \(or a workload: (.*)\)", error)
        self.assertIsNotNone(listed, error)
        names = set(listed.group(1).split(", ")) | set(listed.group(2).split(", ")) | {"probe"}
        self.assertEqual(complete("gate", "--checks", ""), names)

    def test_the_rule_names_are_the_lints_own(self):
        error = subprocess.run([LEAKGATE, "lint", "--select", "no-such-rule", "."], capture_output=True,
                               text=True, timeout=60).stderr
        listed = re.search(r"the rules are (.*)", error)
        self.assertIsNotNone(listed, error)
        self.assertEqual(complete("lint", "--ignore", ""), set(listed.group(1).split(", ")))
        self.assertEqual(complete("lint", "--select", "own-frame-local,frame-stored-s"),
                         {"own-frame-local,frame-stored-static"})


def main():
    global LEAKGATE
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = args.leakgate
    if not os.path.exists(LEAKGATE):
        print(f"no leakgate binary at {LEAKGATE}", file=sys.stderr)
        return 77
    if shutil.which("bash") is None:
        print("no bash on this machine", file=sys.stderr)
        return 77
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
