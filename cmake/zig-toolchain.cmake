# Zig as the C/C++ compiler driver, for a wheel whose binaries need glibc 2.28 and nothing else
# (manylinux_2_28): `zig c++ -target x86_64-linux-gnu.2.28` links against stubs of glibc 2.28's
# symbol versions (not the build machine's glibc, which gcc binds at its own version: 2.36 on
# Debian bookworm) and links Zig's own libc++, libc++abi and libunwind statically (built with
# hidden visibility: only operator new/delete stay exported, weak, as libc++ does).
#
#   cmake -S . -B build-zig -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/zig-toolchain.cmake ...
#   python -m build --wheel -Ccmake.define.CMAKE_TOOLCHAIN_FILE=$PWD/cmake/zig-toolchain.cmake .
#
# Which zig: LEAKGATE_ZIG (a cache variable, or the environment variable of that name), else `zig`
# on PATH, else the one of PyPI's `ziglang` package (pip install ziglang) of a python3 on PATH
# or of LEAKGATE_PYTHON. Which glibc: LEAKGATE_ZIG_TARGET (default x86_64-linux-gnu.2.28).
#
# CMake wants one executable per compiler, so configure writes small wrappers (`zig cc`,
# `zig c++`, `zig ar`, `zig ranlib`, each with the target) into <build>/zig-toolchain/.
# Not a cross build (CMAKE_SYSTEM_NAME is left alone): the host's packages are found as usual,
# and the glibc headers are Zig's, of the target's version.

get_property(_leakgate_zig_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
# try_compile projects get the wrappers' folder from the main project (see the end of this file).
if(NOT _leakgate_zig_in_try_compile)
  set(LEAKGATE_ZIG_TARGET "x86_64-linux-gnu.2.28" CACHE STRING
      "zig -target for the C and C++ compiles and links (glibc version after the last dot)")

  if(NOT LEAKGATE_ZIG AND DEFINED ENV{LEAKGATE_ZIG})
    set(LEAKGATE_ZIG "$ENV{LEAKGATE_ZIG}" CACHE FILEPATH "The zig executable (ziglang)" FORCE)
  endif()
  if(NOT LEAKGATE_ZIG)
    find_program(_leakgate_zig_on_path zig)
    if(_leakgate_zig_on_path)
      set(LEAKGATE_ZIG "${_leakgate_zig_on_path}" CACHE FILEPATH "The zig executable (ziglang)" FORCE)
    endif()
    unset(_leakgate_zig_on_path CACHE)
  endif()
  if(NOT LEAKGATE_ZIG)
    # PyPI's ziglang: <site-packages>/ziglang/zig.
    set(_leakgate_zig_pythons "")
    if(LEAKGATE_PYTHON)
      list(APPEND _leakgate_zig_pythons "${LEAKGATE_PYTHON}")
    endif()
    find_program(_leakgate_zig_python3 python3)
    if(_leakgate_zig_python3)
      list(APPEND _leakgate_zig_pythons "${_leakgate_zig_python3}")
    endif()
    unset(_leakgate_zig_python3 CACHE)
    foreach(_python IN LISTS _leakgate_zig_pythons)
      execute_process(COMMAND "${_python}" -c
                              "import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
                      OUTPUT_VARIABLE _zig OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE _rc ERROR_QUIET)
      if(_rc EQUAL 0 AND EXISTS "${_zig}")
        set(LEAKGATE_ZIG "${_zig}" CACHE FILEPATH "The zig executable (ziglang)" FORCE)
        break()
      endif()
    endforeach()
  endif()
  if(NOT LEAKGATE_ZIG OR NOT EXISTS "${LEAKGATE_ZIG}")
    message(FATAL_ERROR "zig-toolchain.cmake: no zig found. pip install ziglang (into the python3 on "
                        "PATH), or pass -DLEAKGATE_ZIG=/path/to/zig (python -c \"import ziglang, os; "
                        "print(os.path.dirname(ziglang.__file__))\" gives the folder of PyPI's).")
  endif()

  set(LEAKGATE_ZIG_WRAPPERS "${CMAKE_BINARY_DIR}/zig-toolchain")
  file(MAKE_DIRECTORY "${LEAKGATE_ZIG_WRAPPERS}")
  # zig-cc and zig-c++ take the target; zig-ar and zig-ranlib are Zig's llvm-ar and llvm-ranlib.
  foreach(_tool IN ITEMS "cc|cc -target ${LEAKGATE_ZIG_TARGET}" "c++|c++ -target ${LEAKGATE_ZIG_TARGET}"
                         "ar|ar" "ranlib|ranlib")
    string(REPLACE "|" ";" _tool "${_tool}")
    list(GET _tool 0 _name)
    list(GET _tool 1 _args)
    # Zig keeps its caches under $XDG_CACHE_HOME or ~/.cache/zig (the libc++ it builds once per
    # target and flags); ZIG_GLOBAL_CACHE_DIR moves them.
    # cc and c++ drop the link flags package/CMakeLists.txt gives the wheel's module for GCC's
    # driver and GNU ld (-static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL): zig rejects
    # --exclude-libs ("unsupported linker arg") and ignores the other two, and has nothing for
    # them to do: its libc++, libc++abi and libunwind are static and their symbols hidden already.
    if(_name MATCHES "^c")
      set(_filter [=[
for arg do
    shift
    case $arg in
        -static-libstdc++|-static-libgcc|-Wl,--exclude-libs,ALL) ;;
        *) set -- "$@" "$arg" ;;
    esac
done
]=])
    else()
      set(_filter "")
    endif()
    file(WRITE "${LEAKGATE_ZIG_WRAPPERS}/zig-${_name}.tmp"
         "#!/bin/sh\n# Written by cmake/zig-toolchain.cmake.\n${_filter}"
         "exec \"${LEAKGATE_ZIG}\" ${_args} \"$@\"\n")
    file(COPY_FILE "${LEAKGATE_ZIG_WRAPPERS}/zig-${_name}.tmp" "${LEAKGATE_ZIG_WRAPPERS}/zig-${_name}"
         ONLY_IF_DIFFERENT)
    file(REMOVE "${LEAKGATE_ZIG_WRAPPERS}/zig-${_name}.tmp")
    file(CHMOD "${LEAKGATE_ZIG_WRAPPERS}/zig-${_name}"
         PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
endif()

set(CMAKE_C_COMPILER "${LEAKGATE_ZIG_WRAPPERS}/zig-cc")
set(CMAKE_CXX_COMPILER "${LEAKGATE_ZIG_WRAPPERS}/zig-c++")
set(CMAKE_AR "${LEAKGATE_ZIG_WRAPPERS}/zig-ar" CACHE FILEPATH "Archiver (zig ar)" FORCE)
set(CMAKE_RANLIB "${LEAKGATE_ZIG_WRAPPERS}/zig-ranlib" CACHE FILEPATH "Ranlib (zig ranlib)" FORCE)
# No debug information unless the build type asks for it (RelWithDebInfo's and Debug's -g come
# after -g0): zig cc, unlike gcc and clang, emits it by default.
set(CMAKE_C_FLAGS_INIT "-g0")
set(CMAKE_CXX_FLAGS_INIT "-g0")
# Zig links its libc++, libc++abi and libunwind with their debug information; a Release or
# MinSizeRel link drops it (Zig's --strip-debug drops the static symbol table too, as -s would;
# the dynamic symbols stay). Without it the wheel's module is about 4 MB larger.
foreach(_kind IN ITEMS EXE SHARED MODULE)
  foreach(_config IN ITEMS RELEASE MINSIZEREL)
    set(CMAKE_${_kind}_LINKER_FLAGS_${_config}_INIT "-Wl,--strip-debug")
  endforeach()
endforeach()
# The try_compile projects (CMake's compiler checks) see the wrappers too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LEAKGATE_ZIG_WRAPPERS)
# For the project to test (nothing reads it yet): the compiler is Zig's, so link flags of GCC's
# driver and GNU ld are dropped by the wrappers above.
set(LEAKGATE_ZIG_TOOLCHAIN ON)
