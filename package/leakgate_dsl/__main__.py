"""`leakgate-dsl` and `python -m leakgate_dsl`: the leakgate CLI installed with this package
(bin/leakgate beside this file, which embeds the interpreter it was built for and finds its data
in share/leakgate beside it). Replaces this process, so exit codes and signals are the CLI's."""

import os
import sys


def binary() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "leakgate")


def main() -> None:
    path = binary()
    if not os.access(path, os.X_OK):
        sys.exit(f"leakgate-dsl: the CLI is missing from this installation ({path})")
    # Without --python the CLI runs its workers in this interpreter's environment (this venv), not
    # in the one the package was built with.
    env = dict(os.environ)
    env.setdefault("LEAKGATE_DEFAULT_PYTHON", sys.executable)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(path, ["leakgate", *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
