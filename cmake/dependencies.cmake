# What the build needs besides CMake, a C++20 compiler and the CPython it embeds (found by the
# top-level CMakeLists.txt just before this file is included), all looked up here:
#
#   pybind11        a CMake package on the search path (Debian's pybind11-dev 2.10.3; under pip,
#                   PyPI's, a build requirement: scikit-build-core puts the build environment's
#                   site-packages on CMAKE_PREFIX_PATH), else the one the build's Python has
#                   (`python -m pybind11 --cmakedir`); 2.10 or newer
#   fmt             target fmt::fmt                       header-only libraries: the system's
#   CLI11           target CLI11::CLI11                   package (Debian: libfmt-dev, libcli11-dev,
#   nlohmann-json   target nlohmann_json::nlohmann_json   nlohmann-json3-dev, libtomlplusplus-dev),
#   toml++          LEAKGATE_TOMLPLUSPLUS_INCLUDE (a dir)  else the copy in third_party/
#
# The copies in third_party/ are the headers Debian bookworm ships (third_party/*/README.md says
# which version), so an sdist builds with PyPI's packages alone (pip install: pybind11,
# scikit-build-core, and CMake and Ninja where the machine has none). Each lookup says with a
# STATUS line which copy it took. Optional, elsewhere: libclang (lib/lint/lint.cmake) and the CUDA
# toolkit's cuda.h (lib/CMakeLists.txt); without them a check skips with the reason.
#
# LEAKGATE_HEADER_ONLY_DEPS=DIR: fmt (header-only), CLI11, nlohmann-json and toml++ from
# DIR/include, where there, before anything else (scripts/gpu_build.sh's .devicedeps).
# LEAKGATE_USE_BUNDLED_DEPS=ON: the copies in third_party/ even where the system has the package.
set(LEAKGATE_HEADER_ONLY_DEPS "" CACHE PATH
    "Use fmt (header-only), CLI11, nlohmann-json and toml++ from DIR/include where there")
option(LEAKGATE_USE_BUNDLED_DEPS
       "Use the header-only libraries of third_party/ even where the system has them" OFF)
set(_leakgate_third_party "${PROJECT_SOURCE_DIR}/third_party")
# Which of them came from third_party/ (for cmake/install.cmake: an installed config that names
# their include folder names the source tree).
set(LEAKGATE_BUNDLED_DEPS "")

# pybind11. PYBIND11_FINDPYTHON: pybind11 uses the Python found above (Python_EXECUTABLE), not
# whatever its classic lookup would pick from PATH.
set(PYBIND11_FINDPYTHON ON)
find_package(pybind11 CONFIG QUIET)
if(pybind11_FOUND)
  set(_leakgate_pybind11_from "${pybind11_DIR}")
else()
  execute_process(COMMAND "${Python_EXECUTABLE}" -m pybind11 --cmakedir
                  OUTPUT_VARIABLE _leakgate_pybind11_cmakedir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _leakgate_pybind11_rc ERROR_QUIET)
  if(_leakgate_pybind11_rc EQUAL 0 AND IS_DIRECTORY "${_leakgate_pybind11_cmakedir}")
    set(pybind11_DIR "${_leakgate_pybind11_cmakedir}" CACHE PATH "pybind11's CMake package" FORCE)
    find_package(pybind11 CONFIG REQUIRED)
    set(_leakgate_pybind11_from "${Python_EXECUTABLE} -m pybind11 --cmakedir")
  else()
    message(FATAL_ERROR "pybind11 not found: neither a CMake package (Debian: apt-get install "
                        "pybind11-dev, or scripts/setup.sh) nor the pybind11 module of "
                        "${Python_EXECUTABLE} (pip install pybind11)")
  endif()
endif()
if(pybind11_VERSION VERSION_LESS 2.10)
  message(FATAL_ERROR "pybind11 ${pybind11_VERSION} (${_leakgate_pybind11_from}) is older than 2.10 "
                      "(the oldest leakgate is tested with is 2.10.3): pip install 'pybind11>=2.10' and configure "
                      "with -Dpybind11_DIR=$(python -m pybind11 --cmakedir)")
endif()
message(STATUS "leakgate: pybind11 ${pybind11_VERSION} from ${_leakgate_pybind11_from}")

# An imported header-only target: nothing to build, and its headers are system headers to the
# targets that link it (no warnings from them), as a package's are.
function(_leakgate_header_only target include_dir)
  add_library(${target} INTERFACE IMPORTED)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
endfunction()

# fmt, CLI11, nlohmann-json: package name, target, a header it has, the in-tree copy's folder,
# its version, and the Debian package.
foreach(_dep IN ITEMS
        "fmt|fmt::fmt|fmt/format.h|fmt|9.1.0|libfmt-dev"
        "CLI11|CLI11::CLI11|CLI/CLI.hpp|CLI11|2.1.2|libcli11-dev"
        "nlohmann_json|nlohmann_json::nlohmann_json|nlohmann/json.hpp|nlohmann_json|3.11.2|nlohmann-json3-dev")
  string(REPLACE "|" ";" _dep "${_dep}")
  list(GET _dep 0 _name)
  list(GET _dep 1 _target)
  list(GET _dep 2 _header)
  list(GET _dep 3 _copy)
  list(GET _dep 4 _copy_version)
  list(GET _dep 5 _debian)
  if(LEAKGATE_HEADER_ONLY_DEPS AND EXISTS "${LEAKGATE_HEADER_ONLY_DEPS}/include/${_header}")
    _leakgate_header_only(${_target} "${LEAKGATE_HEADER_ONLY_DEPS}/include")
    set(_from "from ${LEAKGATE_HEADER_ONLY_DEPS}/include (LEAKGATE_HEADER_ONLY_DEPS)")
  else()
    if(NOT LEAKGATE_USE_BUNDLED_DEPS)
      find_package(${_name} CONFIG QUIET)
    endif()
    if(${_name}_FOUND AND TARGET ${_target})
      set(_from "${${_name}_VERSION} from the package at ${${_name}_DIR}")
    else()
      _leakgate_header_only(${_target} "${_leakgate_third_party}/${_copy}/include")
      list(APPEND LEAKGATE_BUNDLED_DEPS ${_copy})
      if(LEAKGATE_USE_BUNDLED_DEPS)
        set(_from "from the in-tree copy third_party/${_copy} (${_copy_version}; LEAKGATE_USE_BUNDLED_DEPS)")
      else()
        set(_from "from the in-tree copy third_party/${_copy} (${_copy_version}): no ${_name} package found (Debian: ${_debian})")
      endif()
    endif()
  endif()
  if(_name STREQUAL "fmt" AND NOT _from MATCHES "the package at")
    set_property(TARGET fmt::fmt APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY)
    string(APPEND _from ", header-only")
  endif()
  message(STATUS "leakgate: ${_name} ${_from}")
endforeach()

# toml++: only the folder of toml++/toml.h, for lib/lint/project.cpp (lib/CMakeLists.txt), which
# includes it header-only.
if(NOT LEAKGATE_USE_BUNDLED_DEPS)
  find_path(LEAKGATE_TOMLPLUSPLUS_INCLUDE toml++/toml.h HINTS ${LEAKGATE_HEADER_ONLY_DEPS}/include)
endif()
if(LEAKGATE_TOMLPLUSPLUS_INCLUDE AND NOT LEAKGATE_USE_BUNDLED_DEPS)
  message(STATUS "leakgate: toml++ from ${LEAKGATE_TOMLPLUSPLUS_INCLUDE}")
else()
  set(LEAKGATE_TOMLPLUSPLUS_INCLUDE "${_leakgate_third_party}/tomlplusplus/include")
  list(APPEND LEAKGATE_BUNDLED_DEPS tomlplusplus)
  if(LEAKGATE_USE_BUNDLED_DEPS)
    message(STATUS "leakgate: toml++ from the in-tree copy third_party/tomlplusplus (3.3.0; "
                   "LEAKGATE_USE_BUNDLED_DEPS)")
  else()
    message(STATUS "leakgate: toml++ from the in-tree copy third_party/tomlplusplus (3.3.0): "
                   "no toml++/toml.h found (Debian: libtomlplusplus-dev)")
  endif()
endif()
