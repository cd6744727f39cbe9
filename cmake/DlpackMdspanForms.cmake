# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# dlpm_use_library_form(target header|module): links `target` against the header form or
# the named module, mp-units style, so that one source file builds both ways. Sources test
# DLPM_USE_MODULE to choose between `import dlpack_mdspan;` and the #include.
include_guard(GLOBAL)

function(dlpm_use_library_form target mode)
  target_compile_features(${target} PRIVATE cxx_std_23)
  if(mode STREQUAL "module")
    target_compile_definitions(${target} PRIVATE DLPM_USE_MODULE)
    target_link_libraries(${target} PRIVATE dlpack_mdspan::dlpack_mdspan)
  elseif(mode STREQUAL "header")
    target_link_libraries(${target} PRIVATE dlpack_mdspan::headers)
  else()
    message(FATAL_ERROR "dlpm_use_library_form: mode must be header or module, not '${mode}'")
  endif()
endfunction()
