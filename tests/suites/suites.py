"""Pinned subsets of two DSLs' own test suites, run with pytest (issue 44): what
`bench/plugin_suites.py` times with and without `--leakgate`, and what `check_suites.py` holds
to an expectation file in CI.

  numba-cuda  its CUDA-simulator tests: 7 files of numba.cuda.tests.cudapy (395 tests)
  warp        the CPU variants of 7 test files of warp.tests (206 tests)

Each suite gets a venv of its own under $LEAKGATE_CACHE_DIR/suites (default
~/.cache/leakgate/suites), made once with the pinned release from PyPI and pytest; the leakgate
wheel given is reinstalled on every call. numba-cuda's wheel ships its tests but not its
repository's conftest, whose class fixture `initialize_from_pytest_config` the tests use: the
plug-in `suites_fixture` (written beside the venvs) provides it, doing nothing.
"""

import os
import subprocess
import sys

CACHE = os.path.join(
    os.environ.get("LEAKGATE_CACHE_DIR")
    or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate"),
    "suites")

NUMBA_FILES = ["test_atomics", "test_intrinsics", "test_math", "test_dispatcher", "test_record_dtype",
               "test_device_func", "test_complex"]
WARP_FILES = ["test_launch", "test_func", "test_struct", "test_array", "test_math", "test_vec",
              "test_generics"]

SUITES = {
    "numba-cuda": {
        "packages": ["numba-cuda==0.30.4", "numpy==2.4.6", "cuda-bindings==13.5.0", "cuda-core==1.2.2",
                     "filecheck==1.0.6", "ml_dtypes==0.7.0", "cffi==2.1.1", "psutil==7.2.2", "numba==0.68.1",
                     "llvmlite==0.50.0"],
        "env": {"NUMBA_ENABLE_CUDASIM": "1"},
        "args": ["-p", "suites_fixture", "--import-mode=importlib"]
                + [a for f in NUMBA_FILES for a in ("--pyargs", "numba.cuda.tests.cudapy." + f)],
    },
    "warp": {
        "packages": ["warp-lang==1.19.0", "numpy==2.4.6"],
        "env": {},
        # The test classes' CPU variants: the module-level helpers pytest would also collect need
        # Warp's own runner's fixtures.
        "args": ["-k", "cpu"],
        "tests_of": "warp",
        "files": WARP_FILES,
    },
}

FIXTURE = '''import pytest


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    yield
'''


def prepare(name, wheel, python=sys.executable):
    """The suite's venv with the wheel installed: its interpreter."""
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, "suites_fixture.py"), "w") as out:
        out.write(FIXTURE)
    version = "%d.%d" % tuple(int(x) for x in subprocess.run(
        [python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True,
        check=True).stdout.split())
    path = os.path.join(CACHE, f"{name}-py{version}")
    venv_python = os.path.join(path, "bin", "python")
    if not os.path.exists(os.path.join(path, ".complete")):
        subprocess.run([python, "-m", "venv", "--clear", path], check=True)
        subprocess.run([venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "pytest==9.2.0", *SUITES[name]["packages"]], check=True)
        open(os.path.join(path, ".complete"), "w").close()
    subprocess.run([venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--force-reinstall", "--no-deps", os.path.abspath(wheel)], check=True)
    return venv_python


def command(name, venv_python, *extra):
    """pytest over the suite in that venv, with `extra` options (--leakgate, ...)."""
    spec = SUITES[name]
    args = list(spec["args"])
    if "files" in spec:
        site = subprocess.run([venv_python, "-c", f"import {spec['tests_of']}, os; "
                               f"print(os.path.dirname({spec['tests_of']}.__file__))"],
                              capture_output=True, text=True, check=True).stdout.strip()
        args += [os.path.join(site, "tests", f + ".py") for f in spec["files"]]
    return [venv_python, "-m", "pytest", "-p", "no:cacheprovider", "-q", *extra, *args]


def environment(name):
    return dict(os.environ, PYTHONPATH=CACHE, **SUITES[name]["env"])
