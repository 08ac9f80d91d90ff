"""One run of a command in a process of its own, for the benchmarks that report peak memory: its
wall seconds and the peak resident set of its largest process (the children's ru_maxrss of that
process alone, so that one run's peak is not an earlier run's).

    from run_alone import run_alone
    seconds, peak_kib = run_alone(command)   # exits the benchmark if the command failed (not 0 or 1)

Standard library only.
"""

import subprocess
import sys

MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
seconds = time.perf_counter() - started
if run.returncode not in (0, 1):  # 1: findings
    sys.exit(f"{sys.argv[1]} exited {run.returncode}: {run.stderr[-2000:]}")
print(seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def run_alone(command):
    """(wall seconds, peak KiB) of one run of `command`."""
    run = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr[-2000:])
    seconds, peak = run.stdout.split()
    return float(seconds), int(peak)
