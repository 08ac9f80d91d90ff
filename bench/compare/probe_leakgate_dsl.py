#!/usr/bin/env python3
"""leakgate_dsl (leakgate's own Python package) on the task of workload.py.

    python3 probe_leakgate_dsl.py leaking|clean|MODEL_PATH

The documented use: ``leakgate_dsl.measure(fn)`` runs fn in a region (gc disabled, then the three
reads) and returns the result; its text is what a failing assertion or pytest test prints.
"""

import gc
import sys
import time

import leakgate_dsl

import workload


def main():
    model = workload.load_model(sys.argv[1])
    gc.disable()  # the task's setting
    watch = []
    start = time.perf_counter()
    result = leakgate_dsl.measure(workload.decorate_holding_payload, model, watch)
    seconds = time.perf_counter() - start
    if not result.valid:
        raise SystemExit(f"leakgate_dsl could not measure: {result.error}")
    flagged = result.check("frame-cycle").status == "fail"
    device = result.check("device-memory")
    workload.emit_result(result.text, flagged=flagged, seconds=seconds, ran_workload=bool(watch),
                         alive_after=workload.payload_alive(watch), gc_enabled_after=gc.isenabled(),
                         pinned_bytes=result.pinned_bytes if flagged else 0,
                         device_memory=(f"yes (device sentinels; here: {device.status}, no CUDA)"
                                        if device and device.status == "skip" else "yes (device sentinels)"))


if __name__ == "__main__":
    main()
