# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The nanobind and pybind11 test extensions (bound_nanobind, bound_pybind11), built per
# interpreter flavour beside dlpm_interop by dlpm_python_extension.
include(DlpackMdspanBindings)

# bound_nanobind and bound_pybind11 for one interpreter: its Python.h in `include_dir`, its
# extension suffix, written to <binary dir>/<flavour> beside dlpm_interop.
function(dlpm_binding_extensions flavour include_dir suffix)
  if(NOT DLPM_BINDINGS_OK)
    return()
  endif()
  set(here "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  dlpm_nanobind_runtime(dlpm_nanobind_${flavour} "${include_dir}")

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
# (tests/modules/dlpack_mdspan/compile_fail's harness; header and module form); nor, with
# nanobind, a std::array of views or a std::map of owned tensors as a parameter, with a message
# that names the containers that take them.
if(DLPM_BINDINGS_OK)
  dlpm_compile_fail(array_of_views_nanobind "${CMAKE_CURRENT_LIST_DIR}/array_of_views_nanobind.cpp"
                    "views and owned tensors in this container cannot be refused safely as a parameter")
  dlpm_compile_fail(map_of_owned_nanobind "${CMAKE_CURRENT_LIST_DIR}/map_of_owned_nanobind.cpp"
                    "views and owned tensors in this container cannot be refused safely as a parameter")
  foreach(binding nanobind pybind11)
    dlpm_compile_fail(returns_mdspan_${binding} "${CMAKE_CURRENT_LIST_DIR}/returns_mdspan_${binding}.cpp"
                      "a std::mdspan cannot be returned to Python: nothing would own its memory")
  endforeach()
  foreach(name returns_mdspan_nanobind returns_mdspan_pybind11 array_of_views_nanobind map_of_owned_nanobind)
    string(REGEX MATCH "[a-z0-9]+$" binding "${name}")
    foreach(mode header module)
      foreach(target dlpm_compile_${name}_${mode} dlpm_compile_ok_${name}_${mode})
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
