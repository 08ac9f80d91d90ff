"""The incident's regression test (examples/test_cute_decorator_frees_callers_locals.py), run as a
DSL author runs it: pytest in a venv with leakgate_dsl installed. It fails on the bundled 4.6.1
model and on the real nvidia-cutlass-dsl 4.6.1 with the culprit named, and passes on the reference
runtime and on the real 4.4.2. The real releases come from PyPI (pip's cache when offline); without
either, those cases skip with the reason."""

import os
import subprocess
import sys
import venv

import pytest

from conftest import EXAMPLE, SHIMS, KERNEL


def run_example(python, cwd, pythonpath=None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", str(EXAMPLE)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=900)


def test_fails_on_the_bundled_461_model_with_the_culprit(tmp_path):
    result = run_example(sys.executable, tmp_path, SHIMS / "model")
    assert result.returncode == 1, result.stdout + result.stderr
    for expected in ("1 failed", KERNEL, "cur_frame", "freed-by-gc-only",
                     "test_decorating_frees_the_callers_locals"):
        assert expected in result.stdout, result.stdout


def test_passes_on_the_reference_runtime(tmp_path):
    result = run_example(sys.executable, tmp_path, SHIMS / "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def venv_with_dsl(tmp_path, version):
    wheel = os.environ.get("LEAKGATE_WHEEL")
    if not wheel:
        pytest.skip("LEAKGATE_WHEEL is not set (tests/package/run.sh sets it to the wheel under test)")
    home = tmp_path / f"venv-{version}"
    venv.create(home, with_pip=True)
    python = str(home / "bin/python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel,
                              "pytest", f"nvidia-cutlass-dsl=={version}"],
                             capture_output=True, text=True, timeout=1800)
    if install.returncode != 0:
        pytest.skip(f"nvidia-cutlass-dsl {version} could not be installed (PyPI unreachable and not "
                    f"cached?): {install.stderr.strip().splitlines()[-1:]}")
    return python


@pytest.mark.skipif(os.environ.get("LEAKGATE_REAL_DSL") == "0", reason="LEAKGATE_REAL_DSL=0")
def test_the_real_releases_461_fails_and_442_passes(tmp_path):
    failing = run_example(venv_with_dsl(tmp_path, "4.6.1"), tmp_path)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    for expected in ("1 failed", "cutlass_dsl/cutlass.py", "current_frame", "freed-by-gc-only"):
        assert expected in failing.stdout, failing.stdout
    passing = run_example(venv_with_dsl(tmp_path, "4.4.2"), tmp_path)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "1 passed" in passing.stdout
