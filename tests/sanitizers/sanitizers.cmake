# The sanitizer build (LEAKGATE_SANITIZE, the `debug-asan` preset), included from the top-level
# CMakeLists.txt: the environment every test runs under, so that `ctest --preset debug-asan` and a
# plain `ctest` in build-asan/ agree, and GoogleTest discovery (which runs the unit-test binary at
# build time, an interpreter included) is not failed by what CPython and pybind11 keep at exit.
#
# ASAN_OPTIONS: leaks detected (at every process's exit; a report exits 23, which fails the test),
#   suppressed only by name in lsan.supp. handle_segv=0: a SIGSEGV stays a SIGSEGV, as the
#   fixtures that crash on purpose expect of their worker (ASan would exit 1 instead).
# UBSAN_OPTIONS: gcc's UBSan prints and goes on by default; halting makes undefined behaviour a
#   failing test instead of a line nobody reads.
set(_leakgate_asan "detect_leaks=1:handle_segv=0")
set(_leakgate_environment
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

# The unit tests (GoogleTest, one interpreter in the test process) are where LeakSanitizer can
# judge Python objects: PYTHONMALLOC=malloc makes every object a block it sees (pymalloc's arenas
# it does not scan), and fast_unwind_on_malloc=0 gives allocation stacks through libpython (built
# without frame pointers), which the suppressions name. Both for discovery and for the tests:
# gtest_discover_tests runs the binary through the target's CROSSCOMPILING_EMULATOR, here
# `cmake -E env`, which every executable defined after this point gets.
set(CMAKE_CROSSCOMPILING_EMULATOR
    ${CMAKE_COMMAND} -E env ${_leakgate_environment} PYTHONMALLOC=malloc
    "ASAN_OPTIONS=${_leakgate_asan}:fast_unwind_on_malloc=0")

# Every other test (the integration tests start the sanitized leakgate, which starts sanitized
# workers): ctest reads the top directory's TEST_INCLUDE_FILES before any test runs, and the
# environment set there is inherited by every test it starts. CPython's own allocator is kept for
# them: tests/python and the DSL tests measure pymalloc's blocks.
set(_leakgate_script "${PROJECT_BINARY_DIR}/leakgate_sanitizer_environment.cmake")
file(WRITE "${_leakgate_script}" "# Written by tests/sanitizers/sanitizers.cmake\n")
foreach(_assignment IN LISTS _leakgate_environment ITEMS "ASAN_OPTIONS=${_leakgate_asan}")
  string(REGEX MATCH "^([A-Z_]+)=(.*)$" _ "${_assignment}")
  file(APPEND "${_leakgate_script}" "set(ENV{${CMAKE_MATCH_1}} \"${CMAKE_MATCH_2}\")\n")
endforeach()
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY TEST_INCLUDE_FILES "${_leakgate_script}")
