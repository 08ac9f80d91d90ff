#!/usr/bin/env bash
# The two incidents as a user meets them, with no leakgate sentinel in the code (docs/notes/gpu.md,
# "The incidents in user code"): scripts/gpu_incidents.sh LEAKGATE PYTHON OUT_DIR
# LEAKGATE: a leakgate built for PYTHON (scripts/gpu_build.sh). PYTHONPATH must name the CuTe DSL's
# folders when it is installed with --target (its .pth is not read there). Each script runs once
# in plain Python (`--check`: what the memory counters say) and under `leakgate scan`; the log and
# the JSON reports go to OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
leakgate=$1 python=$2 out=$3
mkdir -p "$out"
log="$out/incidents_log.txt"
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; } >>"$log" 2>&1
step "$python" -c 'import importlib.metadata as m; print("nvidia-cutlass-dsl", m.version("nvidia-cutlass-dsl"))'
step "$python" tests/gpu/incident_train_step.py --check
step "$leakgate" scan --python "$python" --json "$out/incident_train_step.json" -- tests/gpu/incident_train_step.py
step "$python" tests/gpu/incident_launch_loop.py 3000 --check
step "$leakgate" scan --python "$python" --json "$out/incident_launch_loop.json" -- tests/gpu/incident_launch_loop.py 3000
step "$leakgate" scan --python "$python" --trace-sites --json "$out/incident_launch_loop_sites.json" -- tests/gpu/incident_launch_loop.py 300
echo done >>"$log"
