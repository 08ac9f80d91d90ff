# The C/C++ half of `leakgate lint` needs libclang's C API (Debian: libclang-14-dev). Without it
# the build still works and C/C++ files are reported as skipped (lib/lint/cxx_unavailable.cpp).
option(LEAKGATE_WITH_LIBCLANG "Lint C/C++ extension sources with libclang" ON)
set(LEAKGATE_LLVM_ROOT "/usr/lib/llvm-14" CACHE PATH "LLVM installation whose libclang the C/C++ lint uses")

if(LEAKGATE_WITH_LIBCLANG)
  find_path(LEAKGATE_LIBCLANG_INCLUDE_DIR clang-c/Index.h
            HINTS "${LEAKGATE_LLVM_ROOT}/include" NO_DEFAULT_PATH)
  find_library(LEAKGATE_LIBCLANG_LIBRARY NAMES clang clang-14
               HINTS "${LEAKGATE_LLVM_ROOT}/lib" NO_DEFAULT_PATH)
endif()

if(LEAKGATE_WITH_LIBCLANG AND LEAKGATE_LIBCLANG_INCLUDE_DIR AND LEAKGATE_LIBCLANG_LIBRARY)
  # Loaded with dlopen when a C/C++ file is linted (lib/clang/libclang_api.h), not linked: a
  # linked libclang and libLLVM would be loaded by every process leakgate starts.
  get_filename_component(_leakgate_libclang_path "${LEAKGATE_LIBCLANG_LIBRARY}" REALPATH)
  message(STATUS "C/C++ lint: libclang ${_leakgate_libclang_path} (loaded at run time)")
  target_sources(leakgate_lib PRIVATE lint/cxx.cpp lint/cxx_ast.cpp lint/cxx_command_lines.cpp
                                      lint/cxx_findings.cpp lint/cxx_parse.cpp lint/cxx_rules.cpp
                                      clang/libclang_api.cpp)
  target_include_directories(leakgate_lib SYSTEM PRIVATE "${LEAKGATE_LIBCLANG_INCLUDE_DIR}")
  set_property(SOURCE clang/libclang_api.cpp APPEND PROPERTY COMPILE_DEFINITIONS
               "LEAKGATE_LIBCLANG_PATH=\"${_leakgate_libclang_path}\"")
  set(LEAKGATE_HAVE_LIBCLANG ON)
else()
  if(LEAKGATE_WITH_LIBCLANG)
    message(STATUS "C/C++ lint: libclang not found under ${LEAKGATE_LLVM_ROOT} (apt-get install "
                   "libclang-14-dev); C/C++ files will be skipped")
  endif()
  target_sources(leakgate_lib PRIVATE lint/cxx_unavailable.cpp)
  set(LEAKGATE_HAVE_LIBCLANG OFF)
endif()
# Where Python.h is, for files linted without a compile_commands.json.
list(GET Python_INCLUDE_DIRS 0 _leakgate_python_include)
set_property(SOURCE lint/cxx.cpp lint/cxx_unavailable.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             "LEAKGATE_PYTHON_INCLUDE_DIR=\"${_leakgate_python_include}\"")

# `leakgate gate --lint` (lib/commands/gate_lint.h): the lint of the target's sources beside the gate.
target_sources(leakgate_lib PRIVATE commands/gate_lint.cpp)
