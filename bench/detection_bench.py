#!/usr/bin/env python3
"""Benchmark P2 (docs/notes/performance.md): how soon each method sees the per-launch ctypes churn of
fixtures/targets/launch/uncached_packer.py, and whether the launch check ever flags the reference.

    python3 bench/detection_bench.py --leakgate build/leakgate [--reference-calls 1e6]

1. The launch check: the gate with `--launch-runs 1` and fewer and fewer `--launch-calls`; the
   smallest count that still flags all three launch checks. Every case is also warmed up with the
   workload's fixed 200 calls first, so a case needs 200 + runs x calls calls.
2. The incident's RSS method (the reproduction of ../shared/seeds/001_*.txt): its training loop,
   8 launches of 19 scalar arguments per step plus the framework's long-lived allocations, with
   the model's packer and, in a second process, with leakgate's cached reference packer. RSS is
   read after every step; growth shows at the first step from which the model's RSS stays more
   than 1 MiB above the reference's at the same step. The incident itself printed RSS every
   10,000 steps, so with its cadence growth showed at step 10,000 at the earliest.
3. False flags: the launch check on the reference target (`--target reference`) with
   `--reference-calls` measured calls per case; every flagged case is a false flag.

Standard library only; run it with the Python leakgate was built for.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "fixtures", "targets", "launch", "uncached_packer.py")
LAUNCH_CHECKS = ("launch-allocations", "launch-net-blocks", "launch-cyclic-garbage")
WARMUP = 200  # lib/workloads/launch.cpp's default warm-up per case
STEP_CALLS = 8 * (8 + 4 + 4 + 3)  # the incident's loop: 8 launches of 19 scalars per step
MIB = 1 << 20

# The incident's loop (seed 001), on a target's scalar types; RSS after every step as JSON.
RSS_LOOP = r"""
import gc, importlib.util, json, os, sys
def load(path):
    spec = importlib.util.spec_from_file_location("target", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
if sys.argv[1] == "reference":
    sys.path.insert(0, sys.argv[3])
    import leakgate_reference as target
else:
    target = load(sys.argv[1])
types = target.scalar_types
SCALAR_ARGS = [
    (types["Int32"], [64, 128, 192, 256, 512, 1024, 2048, 4096]),
    (types["Int64"], [2048, 4096, 8192, 16384]),
    (types["Float32"], [0.088388, 0.125, 0.0625, 1.0]),
    (types["Float64"], [1.0, 0.5, 0.001]),
]
long_lived_pool = []
def simulate_kernel_call():
    for cls, values in SCALAR_ARGS:
        for v in values:
            cls(v).__c_pointers__()
def simulate_framework_allocs(step):
    long_lived_pool.append({f"k{step}": bytearray(37 + step % 73)})
    long_lived_pool.append(tuple(range(10 + step % 20)))
    long_lived_pool.append([None] * (5 + step % 15))
    if step % 7 == 0:
        long_lived_pool.append(bytearray(200 + step % 300))
page = os.sysconf("SC_PAGE_SIZE")
statm = open("/proc/self/statm", "rb", buffering=0)
def rss():
    statm.seek(0)
    return int(statm.read().split()[1]) * page
gc.disable()
start = rss()
growth = []
for step in range(1, int(sys.argv[2]) + 1):
    for _ in range(8):
        simulate_kernel_call()
    simulate_framework_allocs(step)
    growth.append(rss() - start)
json.dump(growth, sys.stdout)
"""


def gate(leakgate, target, checks, calls, runs):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [leakgate, "gate", "--target", target, "--checks", checks, "--launch-calls", str(calls),
                   "--launch-runs", str(runs), "--json", out.name, "--quiet", "--no-color"]
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        report = json.load(open(out.name))
    return [arg if arg != out.name else "OUT.json" for arg in command], report


def launch_result(report):
    return next(result for result in report["results"] if result["workload"] == "launch")


def flagged_checks(report):
    return {check["name"] for check in launch_result(report)["checks"] if check["status"] == "fail"}


def rss_growth(python, target, steps):
    output = subprocess.run([python, "-c", RSS_LOOP, target, str(steps), os.path.join(ROOT, "lib", "data", "reference")],
                            capture_output=True, text=True, check=True).stdout
    return json.loads(output)


def shell(command):
    return " ".join(command)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leakgate", default=os.path.join(ROOT, "build", "leakgate"))
    parser.add_argument("--steps", type=int, default=20000, help="steps of the RSS loop")
    parser.add_argument("--reference-calls", type=float, default=1e6)
    args = parser.parse_args()
    print(f"# P2 detection: CPython {sys.version.split()[0]}, {os.cpu_count()} cores")

    # 1. The launch check.
    smallest = None
    for calls in (2000, 100, 10, 1):
        command, report = gate(args.leakgate, MODEL, "launch", calls, 1)
        if set(LAUNCH_CHECKS) <= flagged_checks(report):
            smallest = (calls, command)
        else:
            break
    if smallest is None:
        print("launch check: did not flag the model even with 2000 calls")
        return 1
    calls, command = smallest
    print(f"$ {shell(command)}")
    print(f"launch check flags all three checks after {calls} measured call(s) of a case "
          f"({WARMUP} + {calls} = {WARMUP + calls} calls with the warm-up)")

    # 2. The incident's RSS method.
    model = rss_growth(sys.executable, MODEL, args.steps)
    reference = rss_growth(sys.executable, "reference", args.steps)
    shown = None
    for step in range(len(model)):
        if all(model[later] - reference[later] > MIB for later in range(step, len(model))):
            shown = step + 1
            break
    print(f"$ {sys.executable} -c <the incident's loop> {MODEL} {args.steps}   (and `reference`)")
    if shown is None:
        print(f"RSS method: no growth beyond the reference within {args.steps} steps")
    else:
        launch_calls = WARMUP + calls
        print(f"RSS method: growth shows after {shown} steps = {shown * STEP_CALLS} pack calls "
              f"(model +{model[shown - 1] / MIB:.1f} MiB, reference +{reference[shown - 1] / MIB:.1f} MiB); "
              f"the incident's cadence (every 10,000 steps) shows it after {10000 * STEP_CALLS} calls")
        print(f"ratio: the launch check needs {shown * STEP_CALLS / launch_calls:.0f}x fewer calls than "
              f"the RSS method sampled every step, {10000 * STEP_CALLS / launch_calls:.0f}x fewer than the "
              f"incident's cadence")
        print(f"after {args.steps} steps: model +{model[-1] / MIB:.1f} MiB, reference +{reference[-1] / MIB:.1f} MiB")

    # 3. False flags on the reference.
    per_case = int(args.reference_calls)
    runs = 5
    command, report = gate(args.leakgate, "reference", "launch", max(1, per_case // runs), runs)
    result = launch_result(report)
    cases = result["details"].get("cases", [])
    false_flags = sum(1 for case in cases if case.get("flagged"))
    worst = max((max(case["target"][metric]) for case in cases
                 for metric in ("allocations_per_call", "net_blocks_per_call", "cyclic_garbage_per_call")),
                default=0.0)
    print(f"$ {shell(command)}")
    print(f"reference: {false_flags} false flags in {len(cases)} cases x {runs} runs x {per_case // runs} calls "
          f"({len(cases) * per_case:.3g} calls); worst figure {worst:.4f} per call; "
          f"checks {sorted(flagged_checks(report)) or 'all pass'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
