# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Install BUILD_DIR into STAGE, then compile and run a C program with the flags that
# pkg-config reports for the staged dlpack_mdspan.pc.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "step failed (${rc}): ${cmd}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${STAGE}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")
file(GLOB_RECURSE pc_files "${STAGE}/*/dlpack_mdspan.pc")
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
step("${PKG_CONFIG}" --cflags --libs dlpack_mdspan)
set(pc_flags "${step_output}")
separate_arguments(flags UNIX_COMMAND "${pc_flags}")
message(STATUS "pkg-config flags: ${pc_flags}")
string(REGEX MATCH "-L([^ ]+)" _ "${pc_flags}")
set(ENV{LD_LIBRARY_PATH} "${CMAKE_MATCH_1}")
# The build's own C flags too: a sanitizer build's library needs the sanitizer runtime.
separate_arguments(build_flags UNIX_COMMAND "${C_FLAGS}")
step("${CC}" -std=c99 -Wall -Wextra -pedantic -Werror ${build_flags} "${SOURCE}" ${flags} -o "${OUT}")
step("${OUT}")
message(STATUS "${step_output}")
