# What an installed leakgate holds. One list for `cmake --install` and for the Python package:
#   ROOT/bin/leakgate          the CLI; its RPATH names ROOT/lib and the libpython it embeds
#   ROOT/lib/libleakgate.so.*  the library the CLI and probe plug-ins link (lib/CMakeLists.txt)
#                              (neither in the wheel, whose CLI is the extension module: package/)
#   ROOT/share/leakgate/...    its data, at the paths lib/base/data_dir.cpp reads from there
# and, for `cmake --install` only, what a plug-in or a program builds against:
#   ROOT/include/leakgate/*.h              the public API (include/leakgate/api.h)
#   ROOT/lib/cmake/leakgate/               leakgateConfig.cmake and its version file
#   ROOT/lib/pkgconfig/leakgate.pc
#   ROOT/share/bash-completion/completions/leakgate   bash completion (share/completion/)
# ROOT is the install prefix, or, in the wheel, the package folder leakgate_dsl/ beside the
# extension module (scikit-build-core installs into the wheel's site-packages root). Every path
# inside is relative to ROOT, so a prefix copied elsewhere still works.
if(SKBUILD)
  set(LEAKGATE_INSTALL_ROOT "leakgate_dsl/")
else()
  set(LEAKGATE_INSTALL_ROOT "")
endif()
set(_data "${LEAKGATE_INSTALL_ROOT}share/leakgate")
set(_lib "${LEAKGATE_INSTALL_ROOT}lib")

if(LEAKGATE_CLI_BINARY)
  set_target_properties(leakgate PROPERTIES INSTALL_RPATH "$ORIGIN/../lib;${Python_LIBRARY_DIRS}")
  install(TARGETS leakgate RUNTIME DESTINATION "${LEAKGATE_INSTALL_ROOT}bin")
  install(TARGETS leakgate_shared LIBRARY DESTINATION "${_lib}" NAMELINK_SKIP)
endif()
install(FILES lib/workloads/harness.py DESTINATION "${_data}/lib/workloads")
install(FILES lib/worker/boot.py DESTINATION "${_data}/lib/worker")
install(FILES docs/reference/checks.md DESTINATION "${_data}/docs/reference") # SARIF rules' helpUri
install(DIRECTORY lib/lint/python_rules/ DESTINATION "${_data}/lib/lint/python_rules"
        PATTERN "__pycache__" EXCLUDE)
install(FILES lib/commands/versions.py DESTINATION "${_data}/lib/commands")
install(DIRECTORY lib/data/ DESTINATION "${_data}/lib/data" PATTERN "__pycache__" EXCLUDE)
install(FILES fixtures/targets/frame_cycle_461.py DESTINATION "${_data}/fixtures/targets") # the default target
if(TARGET leakgate_echo_kernels)
  install(FILES "${PROJECT_BINARY_DIR}/kernels/echo_scalars.fatbin" DESTINATION "${_data}/kernels")
endif()

if(SKBUILD)
  install(TARGETS leakgate_native LIBRARY DESTINATION leakgate_dsl)
  if(LEAKGATE_CLI_BINARY)
    # A wheel cannot hold symbolic links: one file, libleakgate.so, which the CLI names as it is.
    set_property(TARGET leakgate_shared PROPERTY VERSION)
    set_property(TARGET leakgate_shared PROPERTY SOVERSION)
  endif()
  return()
endif()

# The development files, for what links libleakgate.so: none without the binary.
if(NOT LEAKGATE_CLI_BINARY)
  return()
endif()
# The public headers include pybind11's and Python's (the plug-in runs in
# the interpreter this build embeds) and nlohmann-json's (a result's details): their include
# folders, found now, are written into the config file and the .pc file.
install(TARGETS leakgate_shared LIBRARY DESTINATION lib NAMELINK_ONLY)
install(FILES share/completion/leakgate.bash DESTINATION share/bash-completion/completions
        RENAME leakgate)
install(DIRECTORY include/leakgate DESTINATION include FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/include/leakgate/version.h" DESTINATION include/leakgate)

set(_include_dirs ${Python_INCLUDE_DIRS})
get_target_property(_pybind11_include pybind11::headers INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(_json_include nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
foreach(_dir IN LISTS _pybind11_include _json_include)
  if(_dir AND NOT _dir MATCHES "^\\$<") # generator expressions of a build tree left out
    list(APPEND _include_dirs "${_dir}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _include_dirs)
set(LEAKGATE_DEPENDENCY_INCLUDE_DIRS "${_include_dirs}")
string(REPLACE ";" " -I" LEAKGATE_PC_DEPENDENCY_CFLAGS "-I${_include_dirs}")
set(LEAKGATE_SONAME "libleakgate.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")

include(CMakePackageConfigHelpers)
configure_file(cmake/leakgateConfig.cmake.in "${PROJECT_BINARY_DIR}/leakgateConfig.cmake" @ONLY)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/leakgateConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion) # 0.x: minor releases may break
install(FILES "${PROJECT_BINARY_DIR}/leakgateConfig.cmake" "${PROJECT_BINARY_DIR}/leakgateConfigVersion.cmake"
        DESTINATION lib/cmake/leakgate)
configure_file(cmake/leakgate.pc.in "${PROJECT_BINARY_DIR}/leakgate.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/leakgate.pc" DESTINATION lib/pkgconfig)
