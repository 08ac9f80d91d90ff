#!/usr/bin/env python3
"""refcycle.cycles_created_by on the task of workload.py.

    python3 probe_refcycle.py leaking|clean|MODEL_PATH

The documented use: ``graph = refcycle.cycles_created_by(func)`` returns an ObjectGraph of the
cyclic garbage the call made (it saves and restores the collector's state, so it runs inside the
test's gc.disable()); an empty graph means no cycle. The user then reads the graph: its size,
``count_by_typename()``, its strongly connected components and ``export_image()``, whose content
is ``to_dot()`` (printed here, since rendering it needs Graphviz).
"""

import gc
import sys
import time

import refcycle

import workload


def describe(graph):
    """What a user prints of the graph; to_dot() carries refcycle's annotations (object labels
    and edge labels such as "f_back" or "local 'name'")."""
    components = graph.strongly_connected_components()
    lines = [
        f"{graph!r}: {len(graph)} objects",
        f"count_by_typename(): {dict(graph.count_by_typename())}",
        f"strongly_connected_components(): sizes {sorted(len(c) for c in components)}",
        "to_dot():",
        graph.to_dot(),
    ]
    return "\n".join(lines)


def main():
    model = workload.load_model(sys.argv[1])
    gc.disable()  # the task's setting
    watch = []
    start = time.perf_counter()
    graph = refcycle.cycles_created_by(lambda: workload.decorate_holding_payload(model, watch))
    flagged = len(graph) > 0
    seconds = time.perf_counter() - start  # the check; describing the graph is timed apart
    start = time.perf_counter()
    report = describe(graph) if flagged else "no cycles: empty ObjectGraph"
    describe_seconds = time.perf_counter() - start
    workload.emit_result(report, flagged=flagged, seconds=seconds, ran_workload=bool(watch),
                         describe_seconds=describe_seconds,
                         alive_after=workload.payload_alive(watch),
                         gc_enabled_after=gc.isenabled())


if __name__ == "__main__":
    main()
