#!/usr/bin/env python3
"""The plain-Python count that the real-launch checks are held to: a target's launch cases run in
a loop under gc.disable(), counted with nothing but the standard library.

    real_launch_count.py TARGET.py [DEVICE] [CALLS] [RUNS]

Per case and run, per launch, net of the same loop handing the same arguments to a no-op:
  net blocks      sys.getallocatedblocks() after the loop, less before it;
  cyclic garbage  what one gc.collect() under DEBUG_SAVEALL saves after the loop;
  retained        sys.getallocatedblocks() after that collection, less before the loop.
sys.getallocatedblocks() counts the object allocator's blocks only, where leakgate counts every
allocator domain: the cyclic garbage is the same count in both, the blocks are close. Prints JSON.
No leakgate code runs here; run it with the interpreter and PYTHONPATH the gate used.
"""

import gc
import importlib.util
import json
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("leakgate_target", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["leakgate_target"] = module
    spec.loader.exec_module(module)
    return module


def count(body, calls):
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(calls):
        body()
    after = sys.getallocatedblocks()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    garbage = len(gc.garbage)
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()
    kept = sys.getallocatedblocks()
    return {"net_blocks": (after - before) / calls, "cyclic_garbage": garbage / calls,
            "retained": (kept - before) / calls}


def noop(*arguments):
    return None


def main():
    path = sys.argv[1]
    device = sys.argv[2] if len(sys.argv) > 2 else "cuda"
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    gc.disable()
    cases = load(path).launch_cases(device)
    report = {}
    for name, case in cases.items():
        launch, arguments = case["launch"], case["arguments"]
        def launched():
            launch(*arguments())
        def baseline():
            noop(*arguments())
        count(launched, 200)
        count(baseline, 200)
        rows = []
        for _ in range(runs):
            a, b = count(launched, calls), count(baseline, calls)
            rows.append({key: a[key] - b[key] for key in a})
        report[name] = {key: [row[key] for row in rows] for key in rows[0]}
    print(json.dumps({"python": sys.version.split()[0], "calls": calls, "runs": runs, "cases": report},
                     indent=1))


if __name__ == "__main__":
    main()
