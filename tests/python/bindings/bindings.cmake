# The nanobind and pybind11 test extensions (bound_nanobind, bound_pybind11), built per
# interpreter flavour beside dlpm_interop by dlpm_python_extension. Both binding libraries
# come from PyPI for the python3 on PATH (scripts/requirements-modern.txt); their sources
# are compiled here for each interpreter, as nanobind's own CMake would for one.
option(DLPACK_MDSPAN_BINDING_TESTS "Build the nanobind and pybind11 caster tests (test_bindings.py)" ON)

set(DLPM_BINDINGS_OK FALSE)
if(DLPACK_MDSPAN_BINDING_TESTS)
  find_program(DLPM_BINDINGS_PYTHON python3)
  execute_process(
    COMMAND "${DLPM_BINDINGS_PYTHON}" -c "import nanobind, pybind11; print(nanobind.include_dir()); print(nanobind.source_dir()); print(pybind11.get_include()); print(nanobind.__version__, pybind11.__version__)"
    OUTPUT_VARIABLE _dlpm_bindings RESULT_VARIABLE _dlpm_bindings_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT _dlpm_bindings_rc EQUAL 0)
    message(FATAL_ERROR "dlpack_mdspan: nanobind and pybind11 are not installed for ${DLPM_BINDINGS_PYTHON}; "
                        "run scripts/install-deps, or configure with -DDLPACK_MDSPAN_BINDING_TESTS=OFF")
  endif()
  string(REPLACE "\n" ";" _dlpm_bindings "${_dlpm_bindings}")
  list(GET _dlpm_bindings 0 DLPM_NANOBIND_INCLUDE)
  list(GET _dlpm_bindings 1 DLPM_NANOBIND_SOURCE)
  list(GET _dlpm_bindings 2 DLPM_PYBIND11_INCLUDE)
  list(GET _dlpm_bindings 3 _dlpm_versions)
  message(STATUS "dlpack_mdspan: binding caster tests with nanobind/pybind11 ${_dlpm_versions}")
  set(DLPM_BINDINGS_OK TRUE)
endif()

# bound_nanobind and bound_pybind11 for one interpreter: its Python.h in `include_dir`, its
# extension suffix, written to <binary dir>/<flavour> beside dlpm_interop.
function(dlpm_binding_extensions flavour include_dir suffix)
  if(NOT DLPM_BINDINGS_OK)
    return()
  endif()
  set(here "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  # nanobind's runtime, once per interpreter (its headers are not warning-clean under ours).
  add_library(dlpm_nanobind_${flavour} STATIC "${DLPM_NANOBIND_SOURCE}/nb_combined.cpp")
  target_include_directories(dlpm_nanobind_${flavour} SYSTEM PUBLIC
    "${DLPM_NANOBIND_INCLUDE}" "${DLPM_NANOBIND_INCLUDE}/../ext/robin_map/include" "${include_dir}")
  target_compile_options(dlpm_nanobind_${flavour} PRIVATE -w -fno-strict-aliasing)
  set_target_properties(dlpm_nanobind_${flavour} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
  target_compile_features(dlpm_nanobind_${flavour} PUBLIC cxx_std_17)

  foreach(binding nanobind pybind11)
    set(target bound_${binding}_${flavour})
    add_library(${target} MODULE "${here}/bound_${binding}.cpp")
    set_target_properties(${target} PROPERTIES
      PREFIX "" OUTPUT_NAME bound_${binding} SUFFIX "${suffix}"
      LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${flavour}"
      CXX_VISIBILITY_PRESET hidden)
    target_include_directories(${target} SYSTEM PRIVATE "${include_dir}")
    target_link_libraries(${target} PRIVATE dlpack_mdspan::python dlpack_mdspan::headers)
    target_compile_features(${target} PRIVATE cxx_std_23)
    # The same static libc++ as dlpm_interop (see there): no LLVM libunwind in the process.
    target_link_options(${target} PRIVATE -static-libstdc++ -Wl,--exclude-libs,ALL)
  endforeach()
  target_link_libraries(bound_nanobind_${flavour} PRIVATE dlpm_nanobind_${flavour})
  target_include_directories(bound_pybind11_${flavour} SYSTEM PRIVATE "${DLPM_PYBIND11_INCLUDE}")
endfunction()

# Returning a bare std::mdspan must not compile, with a message that says what to return
# (tests/modules/dlpack_mdspan/compile_fail's harness; header and module form).
if(DLPM_BINDINGS_OK)
  foreach(binding nanobind pybind11)
    dlpm_compile_fail(returns_mdspan_${binding} "${CMAKE_CURRENT_LIST_DIR}/returns_mdspan_${binding}.cpp"
                      "a std::mdspan cannot be returned to Python: nothing would own its memory")
    foreach(mode header module)
      foreach(target dlpm_compile_returns_mdspan_${binding}_${mode} dlpm_compile_ok_returns_mdspan_${binding}_${mode})
        if(TARGET ${target})
          target_link_libraries(${target} PRIVATE dlpack_mdspan::python)
          if(binding STREQUAL "nanobind")
            target_include_directories(${target} SYSTEM PRIVATE "${DLPM_NANOBIND_INCLUDE}" "${DLPM_NANOBIND_INCLUDE}/../ext/robin_map/include")
          else()
            target_include_directories(${target} SYSTEM PRIVATE "${DLPM_PYBIND11_INCLUDE}")
          endif()
        endif()
      endforeach()
    endforeach()
  endforeach()
endif()
