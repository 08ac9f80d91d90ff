#!/usr/bin/env python3
"""The repository's .pre-commit-hooks.yaml, run by pre-commit (from PyPI) as a user's project runs it.

    test_pre_commit_hook.py --leakgate BUILD/leakgate

The hook file is committed into a repository of its own (so that what is tested is the file, not
this checkout's git state), and `pre-commit try-repo` runs it in a second repository: a project
with a frame kept past its call, a pyproject.toml that excludes a vendored copy, and later the
`leakgate: ignore` comments that accept the findings. `leakgate` is found on PATH (the hook is
`language: system`): the build directory is put first. Exit 77 (skip) with the reason when
pre-commit cannot be installed (no PyPI) or the binary is missing.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from tool_venv import tool_venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
HOOKS_FILE = os.path.join(ROOT, ".pre-commit-hooks.yaml")
SKIP = 77
LEAKGATE = None
PRE_COMMIT = None

LEAK = textwrap.dedent("""\
    import inspect

    def kernel(fn):
        frame = inspect.currentframe(){comment}
        return fn
    """)


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=leakgate tests", "-c", "user.email=tests@leakgate.invalid",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                   cwd=cwd, check=True, capture_output=True, text=True)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


class PreCommitHook(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hooks = os.path.join(self.tmp.name, "hooks")
        self.project = os.path.join(self.tmp.name, "project")
        os.makedirs(self.hooks)
        shutil.copy(HOOKS_FILE, self.hooks)
        git(self.hooks, "init", "-q")
        git(self.hooks, "add", ".pre-commit-hooks.yaml")
        git(self.hooks, "commit", "-q", "-m", "hooks")
        os.makedirs(self.project)
        git(self.project, "init", "-q")
        write(self.project, "pkg/dsl.py", LEAK.format(comment=""))
        write(self.project, "vendor/old.py", LEAK.format(comment=""))
        write(self.project, "pyproject.toml", '[tool.leakgate.lint]\nexclude = ["vendor"]\n')
        git(self.project, "add", ".")
        self.env = dict(os.environ, PATH=os.path.dirname(LEAKGATE) + os.pathsep + os.environ.get("PATH", ""),
                        PRE_COMMIT_HOME=os.path.join(self.tmp.name, "pre-commit-home"),
                        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t.invalid",
                        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t.invalid")

    def tearDown(self):
        self.tmp.cleanup()

    def try_repo(self, *files):
        selection = ["--files", *files] if files else ["--all-files"]
        return subprocess.run([PRE_COMMIT, "try-repo", self.hooks, "leakgate-lint", *selection],
                              cwd=self.project, env=self.env, capture_output=True, text=True, timeout=600)

    def test_a_finding_fails_the_hook_and_an_ignore_comment_passes_it(self):
        run = self.try_repo()
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("leakgate lint", run.stdout)
        self.assertIn("own-frame-local", run.stdout)
        self.assertIn("pkg/dsl.py", run.stdout)
        self.assertNotIn("vendor/old.py", run.stdout)  # excluded by the pyproject.toml

        write(self.project, "pkg/dsl.py", LEAK.format(comment="  # leakgate: ignore[own-frame-local]"))
        git(self.project, "add", ".")
        run = self.try_repo()
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("Passed", run.stdout)

    def test_only_excluded_files_pass(self):
        run = self.try_repo("vendor/old.py")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("Passed", run.stdout)


def main():
    global LEAKGATE, PRE_COMMIT
    args = sys.argv[1:]
    if "--leakgate" in args:
        index = args.index("--leakgate")
        LEAKGATE = os.path.abspath(args[index + 1])
        del args[index:index + 2]
    if not LEAKGATE or not os.access(LEAKGATE, os.X_OK):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        return SKIP
    directory, why = tool_venv("pre-commit")
    if directory is None:
        print(f"skip: pre-commit could not be installed from PyPI: {why}")
        return SKIP
    PRE_COMMIT = os.path.join(directory, "bin", "pre-commit")
    program = unittest.main(argv=[sys.argv[0], *args], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
