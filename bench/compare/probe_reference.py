#!/usr/bin/env python3
"""Reference row, no tool: the DSL author's test written by hand, a weakref assertion.

    python3 probe_reference.py leaking|clean|MODEL_PATH

Disables the collector, runs the task of workload.py once and asserts the payload's weakref is
dead. It says only *that* the payload survived; it is here to show what the task's ground truth
is for each model, and what the plainest check costs.
"""

import gc
import sys
import time

import workload


def main():
    model = workload.load_model(sys.argv[1])
    gc.disable()  # the task's setting: a collection here would free the very cycle we look for
    watch = []
    start = time.perf_counter()
    workload.decorate_holding_payload(model, watch)
    alive = workload.payload_alive(watch)
    seconds = time.perf_counter() - start
    report = "AssertionError: the payload outlived its frame" if alive else "passed"
    workload.emit_result(report, flagged=alive, seconds=seconds, alive_after=alive,
                         gc_enabled_after=gc.isenabled())


if __name__ == "__main__":
    main()
