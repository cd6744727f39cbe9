# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The installed pkg-config file under a multiarch libdir (lib/x86_64-linux-gnu, the
# GNUInstallDirs default for a /usr prefix on Debian): configure and build the C facade in
# a fresh tree with -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu, install it into a
# temporary prefix, check that the relocatable dlpack_mdspan.pc resolves its prefix to that
# prefix, and build and run a C program through pkg-config twice: against the shared
# library (with an rpath), then statically (pkg-config --static, Libs.private).
#
#   cmake -DSOURCE_DIR=... -DWORK=... -DGENERATOR=... -DCC=... -DCXX=... -DC_FLAGS=...
#         -DCXX_FLAGS=... -DEXE_LINKER_FLAGS=... -DSHARED_LINKER_FLAGS=... -DBUILD_TYPE=...
#         -DPKG_CONFIG=... -DREADELF=... -DCONSUMER=main.c -P multiarch.cmake
set(libdir_rel "lib/x86_64-linux-gnu")

include("${CMAKE_CURRENT_LIST_DIR}/../../support/step.cmake")

set(build "${WORK}/build")
set(prefix "${WORK}/prefix")
file(REMOVE_RECURSE "${WORK}")

# Only the facade: no tests, examples or module.
step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_COMPILER=${CXX}"
  "-DCMAKE_C_FLAGS=${C_FLAGS}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}" "-DCMAKE_SHARED_LINKER_FLAGS=${SHARED_LINKER_FLAGS}"
  "-DCMAKE_INSTALL_LIBDIR=${libdir_rel}"
  -DDLPACK_MDSPAN_BUILD_TESTS=OFF -DDLPACK_MDSPAN_BUILD_EXAMPLES=OFF -DDLPACK_MDSPAN_BUILD_MODULE=OFF
  -DDLPACK_MDSPAN_BUILD_FUZZERS=OFF -DDLPACK_MDSPAN_BUILD_BENCHMARKS=OFF
  -DDLPACK_MDSPAN_PYTHON=OFF)  # this test builds the C facade targets only
step("${CMAKE_COMMAND}" --build "${build}" --target dlpack_mdspan_c dlpack_mdspan_c_static)
step("${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}")

set(pc_dir "${prefix}/${libdir_rel}/pkgconfig")
if(NOT EXISTS "${pc_dir}/dlpack_mdspan.pc")
  message(FATAL_ERROR "no ${pc_dir}/dlpack_mdspan.pc")
endif()
file(READ "${pc_dir}/dlpack_mdspan.pc" pc_text)
message(STATUS "installed dlpack_mdspan.pc:\n${pc_text}")

set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
unset(ENV{PKG_CONFIG_SYSROOT_DIR})
unset(ENV{LD_LIBRARY_PATH})

# The prefix, libdir and includedir that pkg-config computes are the staged ones.
file(REAL_PATH "${prefix}" prefix_real)
foreach(var prefix libdir includedir)
  step("${PKG_CONFIG}" --variable=${var} dlpack_mdspan)
  file(REAL_PATH "${step_output}" ${var}_seen)
endforeach()
set(problems "")
if(NOT prefix_seen STREQUAL prefix_real)
  list(APPEND problems "prefix resolves to ${prefix_seen}, not ${prefix_real}")
endif()
if(NOT EXISTS "${libdir_seen}/libdlpack_mdspan_c.so" OR NOT EXISTS "${libdir_seen}/libdlpack_mdspan_c.a")
  list(APPEND problems "libdir ${libdir_seen} holds no libdlpack_mdspan_c.so/.a")
endif()
if(NOT EXISTS "${includedir_seen}/dlpack_mdspan.h")
  list(APPEND problems "includedir ${includedir_seen} holds no dlpack_mdspan.h")
endif()
if(problems)
  string(JOIN "\n  " text ${problems})
  message(FATAL_ERROR "dlpack_mdspan.pc under ${libdir_rel}/pkgconfig is not relocatable:\n  ${text}")
endif()
message(STATUS "pkg-config prefix: ${prefix_seen}")

# Compiled and linked as CMake does for the project's own C programs: the build's C flags
# and executable linker flags too (a sanitizer build's library needs the sanitizer runtime).
separate_arguments(build_flags UNIX_COMMAND "${C_FLAGS}")
separate_arguments(link_flags UNIX_COMMAND "${EXE_LINKER_FLAGS}")
step("${PKG_CONFIG}" --cflags dlpack_mdspan)
message(STATUS "pkg-config --cflags: ${step_output}")
separate_arguments(cflags UNIX_COMMAND "${step_output}")
step("${CC}" -std=c99 -Wall -Wextra -pedantic -Werror ${build_flags} ${cflags} -c "${CONSUMER}" -o "${WORK}/consumer.o")

# 1. Shared, found at run time through the rpath (LD_LIBRARY_PATH is unset).
step("${PKG_CONFIG}" --libs dlpack_mdspan)
message(STATUS "pkg-config --libs: ${step_output}")
separate_arguments(flags UNIX_COMMAND "${step_output}")
step("${CC}" ${build_flags} ${link_flags} "${WORK}/consumer.o" ${flags} "-Wl,-rpath,${libdir_seen}" -o "${WORK}/consumer_shared")
step("${READELF}" -d "${WORK}/consumer_shared")
if(NOT step_output MATCHES "NEEDED[^\n]*libdlpack_mdspan_c\\.so")
  message(FATAL_ERROR "consumer_shared does not depend on libdlpack_mdspan_c.so:\n${step_output}")
endif()
step("${WORK}/consumer_shared")
message(STATUS "shared: ${step_output}")

# 2. Static: only the archive is left in libdir, so -ldlpack_mdspan_c takes it, and the
#    C++ standard library must come from Libs.private.
file(GLOB shared_objects "${libdir_seen}/libdlpack_mdspan_c.so*")
file(REMOVE ${shared_objects})
step("${PKG_CONFIG}" --static --libs dlpack_mdspan)
message(STATUS "pkg-config --static --libs: ${step_output}")
separate_arguments(flags UNIX_COMMAND "${step_output}")
step("${CC}" ${build_flags} ${link_flags} "${WORK}/consumer.o" ${flags} -o "${WORK}/consumer_static")
step("${READELF}" -d "${WORK}/consumer_static")
if(step_output MATCHES "NEEDED[^\n]*libdlpack_mdspan_c")
  message(FATAL_ERROR "consumer_static depends on the shared library:\n${step_output}")
endif()
step("${WORK}/consumer_static")
message(STATUS "static: ${step_output}")
