"""pytest-memray on the task of workload.py: the DSL author's regression test as a pytest test.

    LEAKGATE_COMPARE_MODEL=leaking|clean|PATH \
        python3 -m pytest --memray probe_memray_test.py::test_decorating_frees_its_locals

``limit_leaks("1 MB")`` fails the test when memory allocated during it and not freed by its end
exceeds 1 MB at one allocation location (its docs' form; it turns on native traces and traces
Python's allocators itself). ``limit_memory("100 MB")`` fails it when the peak exceeds 100 MB:
the payload's 64 MiB is the legitimate peak of both models, so a limit that the clean model
passes lies above it. Neither test asserts on the weakref: the verdict is the marker's alone.
"""

import gc
import os

import pytest

import workload

# Imported at collection, outside the tracker, so the model's own import is no "leak".
MODEL = workload.load_model(os.environ.get("LEAKGATE_COMPARE_MODEL", "leaking"))


@pytest.fixture(autouse=True)
def collector_disabled():
    """The task's setting. The fixture wraps the memray tracker (which runs in the test call), so
    no collection can free the cycle before memray reads what is left."""
    gc.disable()
    yield
    gc.enable()


@pytest.mark.limit_leaks("1 MB")
def test_decorating_frees_its_locals():
    workload.decorate_holding_payload(MODEL, [])


@pytest.mark.limit_memory("100 MB")
def test_decorating_stays_under_peak():
    workload.decorate_holding_payload(MODEL, [])
