#!/usr/bin/env python3
"""numpy.testing.assert_no_gc_cycles on the task of workload.py.

    python3 probe_numpy.py leaking|clean|MODEL_PATH --gc disabled|enabled

The documented use is ``assert_no_gc_cycles(func, *args)``: it disables the collector itself,
runs the call with gc.DEBUG_SAVEALL, collects, and fails with the repr of every object found in a
cycle. ``--gc disabled`` calls it the way the task is stated, inside the test's gc.disable();
``--gc enabled`` re-enables the collector just for the call, as the helper requires.
"""

import argparse
import gc
import time
import traceback

import numpy.testing

import workload


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--gc", choices=("disabled", "enabled"), required=True)
    args = parser.parse_args()

    model = workload.load_model(args.model)
    gc.disable()  # the task's setting
    watch = []
    report = "passed"
    start = time.perf_counter()
    try:
        if args.gc == "enabled":
            gc.enable()  # the helper asserts gc.isenabled() on entry, then disables it itself
        numpy.testing.assert_no_gc_cycles(workload.decorate_holding_payload, model, watch)
        flagged = False
    except AssertionError:
        flagged = True
        report = traceback.format_exc()  # what pytest or the console shows the DSL author
    seconds = time.perf_counter() - start
    workload.emit_result(report, flagged=flagged, seconds=seconds,
                         ran_workload=bool(watch),
                         alive_after=bool(watch) and workload.payload_alive(watch),
                         gc_enabled_after=gc.isenabled())


if __name__ == "__main__":
    main()
