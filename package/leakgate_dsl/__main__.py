"""`leakgate-dsl` and `python -m leakgate_dsl`: the leakgate CLI, run in this process by the
extension module (leakgate_dsl._native, which links no libpython: the wheel has no binary of its
own). Its workers are this environment's interpreter loading that module; its data is
share/leakgate beside it. Exit codes are the CLI's."""

import os
import sys


def main() -> None:
    try:
        from leakgate_dsl import _native
    except ImportError as error:
        sys.exit(f"leakgate-dsl: the extension module of this installation does not load: {error}")
    # Without --python the CLI runs its workers in this interpreter's environment (this venv).
    os.environ.setdefault("LEAKGATE_DEFAULT_PYTHON", sys.executable)
    sys.stdout.flush()
    sys.stderr.flush()
    name = os.path.basename(sys.argv[0])
    if name in ("__main__.py", "-m", ""):  # python -m leakgate_dsl
        name = "leakgate-dsl"
    # As bytes, as the program got them: a file name that is not UTF-8 comes as surrogate escapes,
    # which no str of the C++ side holds.
    code = _native._cli([os.fsencode(arg) for arg in (name, *sys.argv[1:])])
    sys.exit(code)


if __name__ == "__main__":
    main()
