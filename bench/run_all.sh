#!/usr/bin/env bash
# Runs the benchmarks of docs/notes/performance.md (P1 to P5) and prints every figure as a ratio, each
# under the command that produced it.
#
#   bench/run_all.sh [PYTHON] [BUILD_DIR]      # defaults: scripts/build.sh's Python, build-bench
#   LEAKGATE_BENCH_QUICK=1 bench/run_all.sh     # smaller sizes, for a smoke run
#   LEAKGATE_BENCH_DSL_VENV=VENV bench/run_all.sh  # the venv of the gate-against-import row
#
# Makes a benchmark venv (refcycle and objgraph from PyPI, for P1) under
# $LEAKGATE_CACHE_DIR/bench-venv (default ~/.cache/leakgate/bench-venv), builds leakgate with
# -DLEAKGATE_BUILD_BENCH=ON (needs libbenchmark-dev: scripts/setup.sh), then runs P1 to P5.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/default_python.sh

python=${1:-$(default_python)}
build_dir=${2:-build-bench}
cache_dir=${LEAKGATE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/leakgate}
venv=$cache_dir/bench-venv
quick=${LEAKGATE_BENCH_QUICK:-}
# The real nvidia-cutlass-dsl 4.6.1 for the gate against a bare `import cutlass.cute`: the venv a
# `leakgate bisect --target cute --versions 4.6.1` leaves in the cache, unless one is named.
dsl_venv=${LEAKGATE_BENCH_DSL_VENV:-$cache_dir/venvs/nvidia-cutlass-dsl-4.6.1-py$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')}

scripts/setup.sh
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -c 'import refcycle, objgraph' 2>/dev/null ||
    "$venv/bin/python" -m pip install -q refcycle objgraph

cmake -S . -B "$build_dir" -DLEAKGATE_PYTHON="$python" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLEAKGATE_BUILD_TESTS=ON -DLEAKGATE_BUILD_BENCH=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target leakgate leakgate_scan_bench leakgate_probe_bench

show() {
    echo
    echo "\$ $*"
    "$@"
}

echo "# leakgate benchmarks: $(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), $("$python" -V)"
if [ -n "$quick" ]; then
    show "$build_dir/bench/leakgate_scan_bench" --python "$venv/bin/python" --sizes 1e4,1e5 --repeat 3
    show "$python" bench/detection_bench.py --leakgate "$build_dir/leakgate" --reference-calls 1e5
    show "$python" bench/gate_bench.py --leakgate "$build_dir/leakgate" --repeat 1
    show "$python" bench/parallel_bench.py --leakgate "$build_dir/leakgate" --pairs 2
    show "$build_dir/bench/leakgate_probe_bench" --benchmark_repetitions=2 --benchmark_min_time=0.1
    show "$python" bench/lint_bench.py --leakgate "$build_dir/leakgate" --sizes 1,2 --rounds 1
    show "$python" bench/lint_cxx_bench.py --leakgate "$build_dir/leakgate" --files 10 --pairs 1
else
    show "$build_dir/bench/leakgate_scan_bench" --python "$venv/bin/python" --sizes 1e4,1e5,1e6 --repeat 3
    show "$build_dir/bench/leakgate_scan_bench" --python "$venv/bin/python" --sizes 1e7 --repeat 1 \
        --peers-up-to 0 --objgraph-up-to 0
    show "$python" bench/detection_bench.py --leakgate "$build_dir/leakgate" --reference-calls 1e6
    show "$python" bench/gate_bench.py --leakgate "$build_dir/leakgate" --repeat 3
    show "$python" bench/parallel_bench.py --leakgate "$build_dir/leakgate" --pairs 5 --soak
    show "$build_dir/bench/leakgate_probe_bench" --benchmark_repetitions=5
    show "$python" bench/lint_bench.py --leakgate "$build_dir/leakgate" --sizes 1,2,4 --rounds 3
    show "$python" bench/lint_bench.py --leakgate "$build_dir/leakgate" --sizes 20 --rounds 1
    show "$python" bench/lint_cxx_bench.py --leakgate "$build_dir/leakgate" --files 40 --pairs 5
fi
show "$python" bench/packer_bench.py
if [ -x "$dsl_venv/bin/python" ]; then
    rounds=10
    [ -z "$quick" ] || rounds=3
    show "$python" bench/gate_pairs.py --venv "$dsl_venv" --after "$build_dir/leakgate" --rounds "$rounds"
else
    echo
    echo "# the gate against a bare import of the real DSL: skipped, no venv at $dsl_venv"
    echo "# (make it with: $build_dir/leakgate bisect --target cute --versions 4.6.1 --checks import)"
fi
