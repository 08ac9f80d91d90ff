#!/usr/bin/env python3
"""Every C++ file of the project is as its .clang-format writes it: clang-format-14 (Debian's,
scripts/setup.sh) in --dry-run over the tracked .cpp and .h files, third_party/ and fixtures/ left
out (the lint's fixtures hold the lines their tests name). Exits 1 naming each file that differs,
77 (skip) without clang-format-14 or git.

    check_format.py [ROOT]
"""
import os
import shutil
import subprocess
import sys

SKIP = 77


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    tool = shutil.which("clang-format-14")
    if not tool or not shutil.which("git"):
        print("skip: clang-format-14 or git is not installed (scripts/setup.sh installs them)")
        return SKIP
    listed = subprocess.run(["git", "-C", root, "ls-files", "*.cpp", "*.h"], capture_output=True, text=True)
    if listed.returncode != 0:
        print("skip: not a git checkout: " + listed.stderr.strip())
        return SKIP
    files = [f for f in listed.stdout.split() if not f.startswith(("third_party/", "fixtures/"))]
    differ = [f for f in files
              if subprocess.run([tool, "--dry-run", "-Werror", os.path.join(root, f)],
                                capture_output=True).returncode != 0]
    for f in differ:
        print(f"{f}: not as .clang-format writes it (clang-format-14 -i {f})")
    print(f"{len(files) - len(differ)} of {len(files)} C++ files formatted")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
