# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compile SOURCE with g++ -std=c++20 (no libc++, no <mdspan>: only cuda::std::mdspan) and run it.
set(flags -std=c++20 -Wall -Wextra -Wpedantic -Werror -O1)
foreach(dir ${INCLUDES})
  list(APPEND flags "-I${dir}")
endforeach()
execute_process(COMMAND "${GXX}" ${flags} "${SOURCE}" "${MAIN}" -o "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "g++ failed to compile ${SOURCE}")
endif()
execute_process(COMMAND "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUT} failed")
endif()
