# What an installed leakgate holds. One list for `cmake --install` and for the Python package:
#   ROOT/bin/leakgate          the CLI; its RPATH names the libpython it embeds
#   ROOT/share/leakgate/...    its data, at the paths lib/base/data_dir.cpp reads from there
# ROOT is the install prefix, or, in the wheel, the package folder leakgate_dsl/ beside the
# extension module (scikit-build-core installs into the wheel's site-packages root).
if(SKBUILD)
  set(LEAKGATE_INSTALL_ROOT "leakgate_dsl/")
else()
  set(LEAKGATE_INSTALL_ROOT "")
endif()
set(_data "${LEAKGATE_INSTALL_ROOT}share/leakgate")

set_target_properties(leakgate PROPERTIES INSTALL_RPATH "${Python_LIBRARY_DIRS}")
install(TARGETS leakgate RUNTIME DESTINATION "${LEAKGATE_INSTALL_ROOT}bin")
install(FILES lib/workloads/harness.py DESTINATION "${_data}/lib/workloads")
install(FILES lib/lint/python_rules.py DESTINATION "${_data}/lib/lint")
install(DIRECTORY lib/data/ DESTINATION "${_data}/lib/data" PATTERN "__pycache__" EXCLUDE)
install(FILES fixtures/targets/frame_cycle_461.py DESTINATION "${_data}/fixtures/targets") # the default target
if(TARGET leakgate_echo_kernels)
  install(FILES "${PROJECT_BINARY_DIR}/kernels/echo_scalars.fatbin" DESTINATION "${_data}/kernels")
endif()

if(SKBUILD)
  install(TARGETS leakgate_native LIBRARY DESTINATION leakgate_dsl)
endif()
