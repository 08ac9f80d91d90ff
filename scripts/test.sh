#!/usr/bin/env bash
# The README's second command (and CI's): set up, then build and run every test for each
# CPython leakgate supports, 3.10 to 3.13. Build directories: build/ (3.11) and build-3.X/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/default_python.sh

pythons=()
for version in 3.10 3.11 3.12 3.13; do
    if ! found=$(python_for "$version"); then
        echo "test: no CPython $version with a shared libpython on this machine" >&2
        exit 1
    fi
    pythons+=("$found")
done

failed=0
for python in "${pythons[@]}"; do
    version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    build_dir=build quick=""
    [ "$version" = "3.11" ] || { build_dir=build-$version; quick=quick; }
    echo "=== Python $version ($python) in $build_dir${quick:+ (quick: -O1, no debug information)}"
    scripts/build.sh "$python" "$build_dir" $quick
    started=$SECONDS
    (cd "$build_dir" && ctest --output-on-failure -j"$(nproc)") || failed=1
    echo "=== Python $version: tests took $((SECONDS - started)) s"
done
echo "=== all Pythons: $SECONDS s"

# The installed package (tests/install/run.sh): the 3.11 build installed into a temporary prefix
# and moved, the example probes built against it (find_package and pkg-config) and run by the
# installed gate.
install_started=$SECONDS
tests/install/run.sh build || failed=1
echo "=== install: $((SECONDS - install_started)) s"

# The Python package (tests/package/run.sh): the wheel installed into a fresh venv and its tests run
# from outside the tree; on 3.11 the release wheel of scripts/wheels.sh (Zig, manylinux_2_27,
# build-wheel/3.11-zig), also run on a bare Debian root; on 3.12 with `python -m build` (the sdist,
# then the wheel from it, from scratch, with the system compiler).
package_started=$SECONDS
tests/package/run.sh "${pythons[1]}" || failed=1
tests/package/run.sh "${pythons[2]}" --sdist || failed=1
echo "=== Python package: $((SECONDS - package_started)) s"

# The libFuzzer harnesses (tests/fuzz/run.sh; clang, ASan and UBSan, in build-fuzz/): every
# committed input, then 150,000 mutations each from a fixed seed, as many at once as there are
# cores. A crash, a leak, a hang or undefined behaviour in a reader or writer fails the run.
fuzz_started=$SECONDS
tests/fuzz/run.sh ci || failed=1
echo "=== fuzz: $((SECONDS - fuzz_started)) s"
exit $failed
