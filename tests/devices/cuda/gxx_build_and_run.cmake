# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds SOURCES with g++ -std=c++20 and runs the result. Third-party headers (CUDA, CCCL,
# DLPack, doctest) go in SYSTEM_INCLUDES, so that only our own code must be warning-free.
set(flags -std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Werror -O1)
foreach(dir ${INCLUDES})
  list(APPEND flags "-I${dir}")
endforeach()
foreach(dir ${SYSTEM_INCLUDES})
  # /usr/include is already the compiler's own; naming it again breaks #include_next.
  if(dir AND NOT dir STREQUAL "/usr/include")
    list(APPEND flags -isystem "${dir}")
  endif()
endforeach()
execute_process(COMMAND "${GXX}" ${flags} ${SOURCES} -o "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "g++ failed to compile ${SOURCES}")
endif()
execute_process(COMMAND "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUT} failed")
endif()
