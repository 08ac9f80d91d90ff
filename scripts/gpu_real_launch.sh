#!/usr/bin/env bash
# The real-launch runs of docs/notes/gpu.md: nvidia-cutlass-dsl's compiled launch, release by release.
#   scripts/gpu_real_launch.sh LEAKGATE PYTHON OUT_DIR DSL_DIR...
# LEAKGATE: a leakgate built with nvcc (scripts/gpu_proof.sh builds build-gpu/leakgate).
# PYTHON: the interpreter it embeds. Each DSL_DIR holds one release, installed with
# `pip install --no-index --no-deps --target DSL_DIR` from its wheels (the DSL's .pth file is not
# read there, so its dsl_packages folder goes on PYTHONPATH too). Per release: the gate's
# launch-real and launch checks on the built-in `cute` target, and the plain-Python count of the same
# launches (tests/gpu/real_launch_count.py); the log and the JSON go to OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
leakgate=$1 python=$2 out=$3
shift 3
mkdir -p "$out"
log="$out/real_launch_log.txt"
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; } >>"$log" 2>&1
for dir in "$@"; do
    release=$(basename "$dir")
    export PYTHONPATH="$dir:$dir/nvidia_cutlass_dsl/dsl_packages"
    echo "# $release: PYTHONPATH=$PYTHONPATH" >>"$log"
    step "$python" -c 'import importlib.metadata as m; print(m.version("nvidia-cutlass-dsl"))'
    step "$leakgate" gate --target cute --python "$python" --checks launch-real,launch \
        --json "$out/$release.json"
    "$python" tests/gpu/real_launch_count.py lib/data/targets/cute.py cuda 2000 5 \
        >"$out/$release.count.json" 2>>"$log"
    step cat "$out/$release.count.json"
done
echo "done" >>"$log"
