#!/usr/bin/env python3
"""objgraph on the task of workload.py, by the two recipes its documentation gives.

    python3 probe_objgraph.py leaking|clean|MODEL_PATH --recipe growth|by-type

``growth``: the "memory leak example" of objgraph's docs: show_growth() once for a baseline, run
the code, show_growth() again and read which types grew; then by_type() on the suspect type and
find_backref_chain(obj, is_proper_module) to learn what holds it.

``by-type``: by_type('frame') before and after the call and the frames that are new, then
show_backrefs() of the payload that survived (written as DOT text: rendering needs Graphviz).

objgraph's growth, chain and graph functions (growth, show_growth, get_leaking_objects,
find_backref_chain, show_backrefs) call gc.collect() before they look; only by_type, count and
typestats do not. So the probe records whether the payload was still alive just before and just
after the tool looked.
"""

import argparse
import gc
import io
import time

import objgraph

import workload


def growth_recipe(model, watch):
    """Returns (flagged, report, alive_before_tool)."""

    def not_the_harness(obj):
        # The probe's own weakref to the payload is new too; it is not the DSL's growth.
        return not any(obj is ref for ref in watch)

    objgraph.show_growth(limit=None, file=io.StringIO(), filter=not_the_harness)  # the baseline
    workload.decorate_holding_payload(model, watch)
    alive_before_tool = workload.payload_alive(watch)
    out = io.StringIO()
    objgraph.show_growth(limit=None, file=out, filter=not_the_harness)
    grown = out.getvalue()
    payloads = objgraph.by_type("Payload")
    lines = ["show_growth() after the call:", grown.rstrip() or "(no type grew)",
             f"by_type('Payload'): {len(payloads)} objects"]
    if payloads:
        chain = objgraph.find_backref_chain(payloads[0], objgraph.is_proper_module)
        lines.append("find_backref_chain(payload, is_proper_module): "
                     + " <- ".join(objgraph._safe_repr(o) for o in reversed(chain)))
    return bool(grown.strip()), "\n".join(lines), alive_before_tool


def by_type_recipe(model, watch):
    """Returns (flagged, report, alive_before_tool)."""
    before = {id(frame) for frame in objgraph.by_type("frame")}
    workload.decorate_holding_payload(model, watch)
    alive_before_tool = workload.payload_alive(watch)
    new_frames = [frame for frame in objgraph.by_type("frame") if id(frame) not in before]
    lines = [f"by_type('frame'): {len(new_frames)} new frames"]
    lines += [f"  {frame!r}" for frame in new_frames]
    payloads = objgraph.by_type("Payload")
    lines.append(f"by_type('Payload'): {len(payloads)} objects")
    if payloads:
        # new_frames is the user's variable holding what by_type returned, as at a console; it
        # keeps the frames reachable through show_backrefs' own gc.collect().
        dot = io.StringIO()
        objgraph.show_backrefs(payloads, max_depth=4, output=dot)
        lines += ["show_backrefs(payload) (DOT):", dot.getvalue().rstrip()]
    return bool(new_frames), "\n".join(lines), alive_before_tool


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--recipe", choices=("growth", "by-type"), required=True)
    args = parser.parse_args()

    model = workload.load_model(args.model)
    gc.disable()  # the task's setting
    watch = []
    recipe = growth_recipe if args.recipe == "growth" else by_type_recipe
    start = time.perf_counter()
    flagged, report, alive_before_tool = recipe(model, watch)
    seconds = time.perf_counter() - start
    workload.emit_result(report, flagged=flagged, seconds=seconds, ran_workload=bool(watch),
                         alive_before_tool=alive_before_tool,
                         alive_after=workload.payload_alive(watch),
                         gc_enabled_after=gc.isenabled())


if __name__ == "__main__":
    main()
