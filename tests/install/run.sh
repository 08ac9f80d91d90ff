#!/usr/bin/env bash
# The installed package, as a DSL author uses it (issue: custom probes):
#   tests/install/run.sh BUILD_DIR
# 1. `cmake --install BUILD_DIR` into a temporary prefix, which is then moved elsewhere (the
#    relocated copy must find its data: nothing of the first prefix is left);
# 2. the C++ example probe (examples/probes/cxx) configured and built against the moved prefix
#    with find_package(leakgate 0.2), and the same file built as a one-file consumer with
#    `pkg-config --cflags --libs leakgate`;
# 3. the installed gate with both example probes (the Python one and the C++ one): each must
#    fail on fixtures/targets/kernel_cache.py and pass on the reference.
# Everything happens under one temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:?usage: tests/install/run.sh BUILD_DIR}
work=$(mktemp -d -t leakgate-install-XXXXXX)
trap 'rm -rf "$work"' EXIT

step() { echo "--- install: $*"; }
fail() { echo "install: FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix (then moved)"
cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/prefix"
prefix=$work/prefix
(cd "$prefix" && find . -type f | sort)
for path in bin/leakgate include/leakgate/plugin.h include/leakgate/version.h \
            lib/cmake/leakgate/leakgateConfig.cmake lib/cmake/leakgate/leakgateConfigVersion.cmake \
            lib/pkgconfig/leakgate.pc share/leakgate/lib/workloads/harness.py \
            share/leakgate/fixtures/targets/frame_cycle_461.py share/leakgate/docs/reference/checks.md; do
    [ -e "$prefix/$path" ] || fail "the install has no $path"
done
ls "$prefix"/lib/libleakgate.so.* >/dev/null || fail "the install has no libleakgate.so.*"

leakgate=$prefix/bin/leakgate
unset LEAKGATE_DATA_DIR
step "the moved install finds its data"
"$leakgate" --version
step "SARIF rules point into the installed checks reference"
"$leakgate" lint --quiet --sarif "$work/lint.sarif" fixtures/lint/own_frame_in_local.py || true
grep -q "\"helpUri\": *\"file://$prefix/share/leakgate/docs/reference/checks.md#" "$work/lint.sarif" ||
    fail "no helpUri into $prefix/share/leakgate/docs/reference/checks.md in the lint's SARIF"
code=0
"$leakgate" gate --quiet --checks import --json "$work/default.json" || code=$?
[ "$code" -eq 0 ] || fail "gate --checks import on the bundled default target: exit $code"

step "the C++ example against the moved install (find_package)"
cmake -S examples/probes/cxx -B "$work/probe-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/probe-build" >/dev/null
cxx_probe=$work/probe-build/libretained_blocks_probe.so
[ -f "$cxx_probe" ] || fail "the example built no $cxx_probe"

step "find_package refuses another minor version"
mkdir -p "$work/version-check"
cat > "$work/version-check/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(version_check LANGUAGES NONE)
find_package(leakgate 0.3 CONFIG QUIET)
if(leakgate_FOUND)
  message(FATAL_ERROR "find_package(leakgate 0.3) accepted leakgate ${leakgate_VERSION}")
endif()
find_package(leakgate 0.2 CONFIG REQUIRED)
message(STATUS "leakgate ${leakgate_VERSION} for 0.2, none for 0.3")
CMAKE
cmake -S "$work/version-check" -B "$work/version-check/build" -DCMAKE_PREFIX_PATH="$prefix" | grep "leakgate " \
    || fail "find_package(leakgate) accepted another minor version, or refused its own"

step "a one-file consumer with pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs leakgate)
echo "pkg-config --cflags --libs leakgate: $flags"
# shellcheck disable=SC2086 # the flags are words
c++ -std=c++20 -O1 -shared -fPIC -fvisibility=hidden examples/probes/cxx/retained_blocks_probe.cpp \
    $flags -o "$work/libone_file_probe.so"

python_probe=$root/examples/probes/decorated_functions_freed.py
# Each probe on a target: the expected exit code and status of each probe check.
judge() { # TARGET EXPECTED_EXIT EXPECTED_STATUS PROBE...
    local target=$1 want_exit=$2 want_status=$3; shift 3
    local args=() probe
    for probe in "$@"; do args+=(--probe "$probe"); done
    local code=0
    "$leakgate" gate --target "$target" --checks probe --no-color --json "$work/probes.json" "${args[@]}" || code=$?
    [ "$code" -eq "$want_exit" ] || fail "gate --probe on $target: exit $code, expected $want_exit"
    python3 - "$work/probes.json" "$want_status" "$#" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
checks = [c for r in report["results"] if r["role"] == "target" and r["workload"] == "probe" for c in r["checks"]]
assert len(checks) == int(sys.argv[3]), checks
for check in checks:
    assert check["status"] == sys.argv[2], check
print(f"  {len(checks)} probe checks {sys.argv[2]}")
PY
}
step "both example probes on the kernel-cache model: each must fail"
judge "$root/fixtures/targets/kernel_cache.py" 1 fail "$python_probe" "$cxx_probe"
step "both example probes on the reference: each must pass"
judge reference 0 pass "$python_probe" "$cxx_probe"
step "the pkg-config build of the C++ example, on both"
judge "$root/fixtures/targets/kernel_cache.py" 1 fail "$work/libone_file_probe.so"
judge reference 0 pass "$work/libone_file_probe.so"
echo "install: PASS"
