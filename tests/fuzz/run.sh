#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `fuzz` preset: clang 16, ASan and UBSan, in build-fuzz/) and
# runs each over its corpus for a bounded time, as many at once as there are cores. Fails when a
# harness crashes, leaks, times out or hits undefined behaviour; the input that did it is kept in
# build-fuzz/fuzz-findings/<harness>/ (commit it to tests/fuzz/corpus/<harness>/ as
# regression-<what>, beside the fix). The committed seeds are only read; what the fuzzers add
# grows in build-fuzz/fuzz-corpus/<harness>/ and is reused by the next run.
#
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS]     (default 60)
#   tests/fuzz/run.sh 0                         just run every corpus input once (a regression run)
#   tests/fuzz/run.sh ci                        CI's run: every corpus input, then 150,000 mutations
#                                               from a fixed seed, from the committed corpus alone:
#                                               the same inputs on every machine, so it is
#                                               repeatable (what it finds was there before)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
harnesses=(baseline budgets worker_result report_writers)
build_dir=build-fuzz

started=$SECONDS
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
echo "=== fuzz: harnesses built in $((SECONDS - started)) s"

# print_stacktrace: UBSan's report names the line that did it; the build makes every UBSan
# report fatal (-fno-sanitize-recover), so it is a crash libFuzzer keeps the input of.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# Reports name functions and lines when a symbolizer is there (llvm-16 has the one for clang 16).
for symbolizer in /usr/lib/llvm-16/bin/llvm-symbolizer "$(command -v llvm-symbolizer || true)"; do
    if [ -x "$symbolizer" ]; then
        export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$symbolizer}
        break
    fi
done

run_one() {
    local name=$1
    local corpus=tests/fuzz/corpus/$name
    local grown=$build_dir/fuzz-corpus/$name
    local findings=$build_dir/fuzz-findings/$name
    local log=$build_dir/fuzz-logs/$name.log
    mkdir -p "$grown" "$findings" "$(dirname "$log")"
    local args=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
                -artifact_prefix="$findings/")
    case $name in baseline | worker_result | report_writers) args+=(-dict=tests/fuzz/json.dict) ;; esac
    if [ "$seconds" = ci ]; then
        local fresh=$build_dir/fuzz-ci/$name
        rm -rf "$fresh" && mkdir -p "$fresh"
        "$build_dir/tests/fuzz/fuzz_$name" "${args[@]}" -seed=1 -runs=150000 "$fresh" "$corpus" >"$log" 2>&1
    elif [ "$seconds" -eq 0 ]; then
        # Every committed input once, the regression inputs among them.
        "$build_dir/tests/fuzz/fuzz_$name" "${args[@]}" -runs=0 "$corpus" >"$log" 2>&1
    else
        "$build_dir/tests/fuzz/fuzz_$name" "${args[@]}" -max_total_time="$seconds" "$grown" "$corpus" \
            >"$log" 2>&1
    fi
}

pids=()
names=()
status=0
report() { # $1: index into pids/names; waits for that harness and says how it went
    local name=${names[$1]} log=$build_dir/fuzz-logs/${names[$1]}.log
    if wait "${pids[$1]}"; then
        local runs
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        echo "=== fuzz: $name: ${runs:-?} executions, no crash, no leak, no undefined behaviour" \
             "($(find "$build_dir/fuzz-corpus/$name" -type f | wc -l) inputs in its grown corpus)"
    else
        echo "=== fuzz: $name FAILED; the end of $log:" >&2
        tail -n 60 "$log" >&2
        status=1
    fi
}
slots=$(nproc)
for name in "${harnesses[@]}"; do
    if ((${#pids[@]} >= slots)); then # wait for the oldest before starting another
        report $((${#pids[@]} - slots))
    fi
    run_one "$name" &
    pids+=($!)
    names+=("$name")
done
for ((i = ${#pids[@]} - slots < 0 ? 0 : ${#pids[@]} - slots; i < ${#pids[@]}; ++i)); do
    report "$i"
done
echo "=== fuzz: $((SECONDS - started)) s in all"
exit $status
