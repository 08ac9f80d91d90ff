#!/usr/bin/env bash
# Configures and builds leakgate for one CPython: scripts/build.sh [PYTHON] [BUILD_DIR].
# One build embeds one CPython (major.minor); use one build directory per version.
set -euo pipefail
cd "$(dirname "$0")/.."

default_python() {
    for candidate in /root/.pyenv/versions/3.11.*/bin/python3 /usr/bin/python3.11; do
        [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
    command -v python3
}

python=${1:-$(default_python)}
build_dir=${2:-build}
cmake -S . -B "$build_dir" -DLEAKGATE_PYTHON="$python" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEAKGATE_BUILD_TESTS=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
