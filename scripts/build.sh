#!/usr/bin/env bash
# Configures and builds leakgate for one CPython: scripts/build.sh [PYTHON] [BUILD_DIR].
# One build embeds one CPython (major.minor); use one build directory per version.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/default_python.sh

python=${1:-$(default_python)}
build_dir=${2:-build}
cmake -S . -B "$build_dir" -DLEAKGATE_PYTHON="$python" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEAKGATE_BUILD_TESTS=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
