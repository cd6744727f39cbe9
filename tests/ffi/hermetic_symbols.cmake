# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The shared C facade is hermetic: it exports the C API (dlpm_*) and nothing else, and it
# neither imports nor depends on a C++ runtime, which would interpose on the host
# process's (libstdc++ in Python with PyTorch or JAX), nor on any unwinder but the
# system's one, libgcc_s.
#
#   cmake -DLIBRARY=<libdlpack_mdspan_c.so> -DNM=<nm> -DREADELF=<readelf>
#         [-DUNWINDER=system|private] [-DEXPORTS_ONLY=ON] -P hermetic_symbols.cmake
#
# UNWINDER=system (the default build): _Unwind_* may be imported, but only with the
# GCC_* symbol versions of libgcc_s.so.1, and only libgcc_s may be NEEDED for it; never
# LLVM's libunwind. UNWINDER=private (DLPACK_MDSPAN_C_PRIVATE_UNWINDER=ON): no _Unwind_*
# import and no libgcc_s at all.
# EXPORTS_ONLY=ON (sanitizer builds, which keep the shared C++ runtime on purpose) checks
# the exported symbols only.
foreach(var LIBRARY NM READELF)
  if(NOT ${var})
    message(FATAL_ERROR "hermetic_symbols.cmake: ${var} is not set")
  endif()
endforeach()

function(run_tool out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# The symbol names (the last field of each nm line), one list element each.
function(symbols out_var)
  run_tool(text "${NM}" -D ${ARGN} "${LIBRARY}")
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "[^ \t]+$" name "${line}")
    if(name)
      list(APPEND names "${name}")
    endif()
  endforeach()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

if(NOT UNWINDER)
  set(UNWINDER system)
endif()
if(NOT UNWINDER MATCHES "^(system|private)$")
  message(FATAL_ERROR "hermetic_symbols.cmake: UNWINDER must be system or private, not ${UNWINDER}")
endif()
set(problems "")
set(unwinder_imports "")
# C++ runtime and unwinder symbols: mangled C++ (_Z*), the Itanium ABI runtime (__cxa_*),
# the personality routines and the unwinder (_Unwind_*, libunwind's unw_*/__unw_*).
set(runtime_re "^(_Z|__cxa_|__gxx_personality|__gcc_personality|_Unwind_|__unw_|unw_|__register_frame|__deregister_frame)")

symbols(defined --defined-only)
list(LENGTH defined n_defined)
set(n_api 0)
foreach(name IN LISTS defined)
  if(name MATCHES "^dlpm_[A-Za-z0-9_]+$")
    math(EXPR n_api "${n_api} + 1")
  else()
    list(APPEND problems "exported symbol outside the C API: ${name}")
  endif()
endforeach()
if(n_api EQUAL 0)
  list(APPEND problems "no dlpm_* symbol exported at all")
endif()

if(NOT EXPORTS_ONLY)
  symbols(undefined --undefined-only)
  foreach(name IN LISTS undefined)
    # glibc's own __cxa_finalize/__cxa_atexit/__cxa_thread_atexit_impl are libc, not the
    # C++ runtime: they carry a GLIBC version.
    if(name MATCHES "^__cxa_(finalize|atexit|thread_atexit_impl)@+GLIBC_")
      continue()
    endif()
    if(UNWINDER STREQUAL "system" AND name MATCHES "^_Unwind_[A-Za-z_]+@+GCC_[0-9.]+$")
      list(APPEND unwinder_imports "${name}")  # the system unwinder, bound by version
      continue()
    endif()
    if(name MATCHES "${runtime_re}")
      list(APPEND problems "imports a C++ runtime or unwinder symbol: ${name}")
    endif()
  endforeach()

  run_tool(dynamic "${READELF}" -d "${LIBRARY}")
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" needed_lines "${dynamic}")
  set(needed "")
  foreach(line IN LISTS needed_lines)
    string(REGEX REPLACE ".*\\[([^]]+)\\]$" "\\1" lib "${line}")
    list(APPEND needed "${lib}")
    if(lib MATCHES "^lib(c\\+\\+|c\\+\\+abi|unwind|stdc\\+\\+)\\.")
      list(APPEND problems "depends on a C++ runtime or LLVM's unwinder: NEEDED ${lib}")
    elseif(lib MATCHES "^libgcc_s\\." AND UNWINDER STREQUAL "private")
      list(APPEND problems "depends on the system unwinder though it was to carry its own: NEEDED ${lib}")
    endif()
  endforeach()
  list(LENGTH undefined n_undefined)
  list(LENGTH unwinder_imports n_unwinder)
  string(JOIN ", " needed_text ${needed})
  message(STATUS "NEEDED: ${needed_text}")
  message(STATUS "imports: ${n_undefined} undefined dynamic symbols, of which ${n_unwinder} _Unwind_*@GCC_* (unwinder: ${UNWINDER})")
endif()

message(STATUS "exports: ${n_api} dlpm_* symbols of ${n_defined} defined dynamic symbols")
if(problems)
  list(LENGTH problems n_problems)
  string(JOIN "\n  " text ${problems})
  message(FATAL_ERROR "${LIBRARY} is not hermetic (${n_problems} problems):\n  ${text}")
endif()
message(STATUS "${LIBRARY}: hermetic")
