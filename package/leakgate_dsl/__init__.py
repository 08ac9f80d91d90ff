"""leakgate in your own process: measure what code keeps alive under gc.disable().

    import leakgate_dsl

    def user_code():
        tensor = leakgate_dsl.sentinel("tensor", 64 << 20)  # the caller's data
        @dsl.kernel
        def kernel(): ...

    result = leakgate_dsl.measure(user_code)   # or: with leakgate_dsl.region() as r: ...
    leakgate_dsl.assert_clean(result)          # AssertionError with the culprit, local, path, bytes

The measurements are the extension module's (leakgate_dsl._native), built from the same C++ library
as the `leakgate` CLI; the pytest plugin (leakgate_dsl.pytest_plugin) uses them per test. The CLI
itself is `leakgate-dsl` (or `python -m leakgate_dsl`).
"""

from leakgate_dsl._native import CudaUnavailable, DeviceSentinel, HostSentinel, __version__
from leakgate_dsl._api import (
    SENTINEL_RULES,
    MeasurementError,
    PerCall,
    Region,
    assert_clean,
    assert_no_frame_cycles,
    assert_per_call,
    assert_sentinels_freed,
    cuda_status,
    device_sentinel,
    explain,
    measure,
    per_call,
    region,
    sentinel,
    track,
    violations,
)
from leakgate_dsl._results import Check, Finding, Frame, Result, SentinelVerdict, Step

__all__ = [
    "Check", "CudaUnavailable", "DeviceSentinel", "Finding", "Frame", "HostSentinel",
    "MeasurementError", "PerCall", "Region", "Result", "SENTINEL_RULES", "SentinelVerdict", "Step",
    "__version__", "assert_clean", "assert_no_frame_cycles", "assert_per_call",
    "assert_sentinels_freed", "cuda_status", "device_sentinel", "explain", "measure", "per_call",
    "region", "sentinel", "track", "violations",
]

# Frames of this package are leakgate's own: a finding counts them and names them only when the
# code under test keeps one.
def _register_own_files() -> None:
    import os
    from leakgate_dsl import _native as native
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("_api.py", "pytest_plugin.py"):
        native.add_harness_file(os.path.join(here, name))


_register_own_files()
del _register_own_files
