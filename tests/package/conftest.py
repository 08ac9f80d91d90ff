"""The Python package's tests. They run against an installed leakgate_dsl (a wheel in a fresh venv,
tests/package/run.sh), from a copy of this folder outside the source tree: the tree gives only
fixture files (LEAKGATE_SOURCE)."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

import leakgate_dsl

pytest_plugins = ["pytester"]

# The source tree, for its fixture files: tests/package/run.sh runs a copy of this folder from
# outside the tree and says where the tree is.
SOURCE = Path(os.environ.get("LEAKGATE_SOURCE") or Path(__file__).resolve().parents[2]).resolve()
FIXTURES = SOURCE / "fixtures"
PACKAGE = Path(leakgate_dsl.__file__).resolve().parent
MODEL_461 = PACKAGE / "share/leakgate/fixtures/targets/frame_cycle_461.py"  # shipped in the wheel
CLEAN_MODEL = FIXTURES / "targets/temporary_back.py"
SHIMS = SOURCE / "tests/package/shims"
EXAMPLE = SOURCE / "examples/test_cute_decorator_frees_callers_locals.py"
# The culprit as leakgate names it: frames have qualified names from 3.11 (co_qualname) on.
KERNEL = "ModelDSL.kernel" if sys.version_info >= (3, 11) else "kernel"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def model():
    """The bundled 4.6.1 model: ModelDSL.kernel keeps its own frame in `cur_frame`."""
    return load(MODEL_461, "leakgate_test_model_461")


@pytest.fixture(scope="session")
def clean_model():
    """The same decorators, fixed: the frame is read and dropped."""
    return load(CLEAN_MODEL, "leakgate_test_clean_model")
