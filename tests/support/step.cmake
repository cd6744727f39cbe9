# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# step(COMMAND...): runs one step of a script-mode test (cmake -P) and fails the test with
# the command and its output when the step fails. The step's stdout is left in
# ${step_output}; stderr is part of the failure message only.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "step failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
