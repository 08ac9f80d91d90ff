#!/usr/bin/env bash
# Configures and builds leakgate for one CPython: scripts/build.sh [PYTHON] [BUILD_DIR] [quick|cli].
# One build embeds one CPython (major.minor); use one build directory per version. `quick` builds
# with -O1 and no debug information (about a third less compile time: scripts/test.sh uses it for
# the Pythons other than the main build's, which stays RelWithDebInfo).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/default_python.sh

python=${1:-}
python=${python:-$(default_python)}
build_dir=${2:-build}
flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG")
if [ "${3:-}" = quick ]; then
    flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG")
fi
# `cli`: the leakgate executable and what it runs (its library, the kernels), not the tests; a
# later build of the same folder without it adds them.
targets=()
if [ "${3:-}" = cli ]; then
    targets=(--target leakgate)
fi
cmake -S . -B "$build_dir" -DLEAKGATE_PYTHON="$python" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEAKGATE_BUILD_TESTS=ON \
    "${flags[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
