#!/usr/bin/env bash
# Builds build-gpu/leakgate (tests off) for the GPU runs of docs/notes/gpu.md:
#   scripts/gpu_build.sh PYTHON LOG
# PYTHON: the CPython to embed. Where fmt, CLI11, nlohmann-json or toml++ are not installed, put
# their headers under .devicedeps/include (docs/notes/gpu.md, "The commands": one cp on a Debian machine)
# and they are used header-only. Every step and its output go to LOG; exit 1 without a binary.
set -uo pipefail
cd "$(dirname "$0")/.."
python=$1 log=$2
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; } >>"$log" 2>&1
configure=(-S . -B build-gpu -DLEAKGATE_PYTHON="$python" -DLEAKGATE_BUILD_TESTS=OFF
           -DCMAKE_BUILD_TYPE=RelWithDebInfo)
pybind11_dir=$("$python" -m pybind11 --cmakedir 2>/dev/null) && configure+=(-Dpybind11_DIR="$pybind11_dir")
[ -d .devicedeps/include ] && configure+=(-DLEAKGATE_HEADER_ONLY_DEPS="$PWD/.devicedeps")
build=(--build build-gpu -j"$(nproc)")
command -v ninja >/dev/null && { configure+=(-G Ninja); build+=(-- -k 0); } # every error at once
step cmake "${configure[@]}"
step cmake "${build[@]}"
[ -x build-gpu/leakgate ] || { echo "no leakgate binary: see the build above" >>"$log"; exit 1; }
