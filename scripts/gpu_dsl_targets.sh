#!/usr/bin/env bash
# The built-in DSL targets on the GPU (docs/notes/gpu.md, "DSL targets on the H200"):
#   scripts/gpu_dsl_targets.sh PYTHON OUT_DIR TARGET=DIR...
# PYTHON: the CPython to embed (build-gpu/leakgate is built for it when missing). Each DIR holds
# the DSL, installed with `pip install --no-index --no-deps --target DIR` from its wheels, and goes
# on PYTHONPATH for its TARGET (a built-in target name: taichi, numba-cuda, ...). Per target: the
# gate's decoration checks with 1 GiB device sentinels and its real launch on CUDA, then the
# plain-Python count of the same launches (tests/gpu/real_launch_count.py); the log, the JSON
# reports and the counts go to OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
python=$1 out=$2
shift 2
mkdir -p "$out"
log="$out/dsl_targets_log.txt"
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; } >>"$log" 2>&1
[ -x build-gpu/leakgate ] || scripts/gpu_build.sh "$python" "$log" || exit 1
for pair in "$@"; do
    target=${pair%%=*} dir=${pair#*=}
    export PYTHONPATH="$dir"
    echo "# $target: PYTHONPATH=$PYTHONPATH" >>"$log"
    step build-gpu/leakgate gate --target "$target" --python "$python" \
        --checks decorate,import,decorations,launch-real --device-sentinel-mib 1024 --json "$out/$target.json"
    file=lib/data/targets/${target//-/_}_dsl.py # the built-in target's file (cute's is cute.py)
    [ "$target" = cute ] && file=lib/data/targets/cute.py
    "$python" tests/gpu/real_launch_count.py "$file" cuda 2000 5 >"$out/$target.count.json" 2>>"$log"
    step cat "$out/$target.count.json"
done
echo "done" >>"$log"
