# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The SYCL runtime the SYCL USM tests and example run on (tests/devices/sycl,
# tests/python/sycl, examples/cpp/sycl_usm.cpp): the interpreter DLPACK_MDSPAN_SYCL_PYTHON
# (cmake/DlpackMdspanPython.cmake; the SYCL venv of scripts/install-deps), through which
# devices/sycl found dpctl for dlpack_mdspan::sycl, and whose venv holds Intel's OpenCL CPU
# device (the intel-opencl-rt wheel). Off unless all of that is there. Sets DLPM_SYCL_OK,
# DLPM_SYCL_PYTHON and DLPM_SYCL_ENVIRONMENT (the VAR=value list a process needs to see that
# device). Not include_guard(GLOBAL): the variables are directory-scoped, so each includer
# finds them.

option(DLPACK_MDSPAN_SYCL_TESTS "Build and run the SYCL USM (kDLOneAPI) tests when dpctl is found" ON)
include(DlpackMdspanPython)

set(DLPM_SYCL_OK FALSE)
if(DLPACK_MDSPAN_SYCL_TESTS AND DLPACK_MDSPAN_SYCL_PYTHON AND TARGET dlpack_mdspan::sycl)
  dlpm_python_probe(_dlpm_sycl_py "${DLPACK_MDSPAN_SYCL_PYTHON}")
  if(_dlpm_sycl_py_FOUND)
    # The OpenCL ICD loader reads OCL_ICD_FILENAMES; the runtime's libraries sit in the
    # venv's lib folder, which the ICD does not search by itself.
    set(DLPM_SYCL_ENVIRONMENT "LD_LIBRARY_PATH=${_dlpm_sycl_py_PREFIX}/lib")
    if(EXISTS "${_dlpm_sycl_py_PREFIX}/lib/libintelocl.so")
      list(APPEND DLPM_SYCL_ENVIRONMENT "OCL_ICD_FILENAMES=${_dlpm_sycl_py_PREFIX}/lib/libintelocl.so")
    endif()
    # Under ASan, the runtimes' process-lifetime allocations are not our leaks.
    list(APPEND DLPM_SYCL_ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/support/sycl_runtime.lsan.supp")
    set(DLPM_SYCL_PYTHON "${DLPACK_MDSPAN_SYCL_PYTHON}")
    set(DLPM_SYCL_OK TRUE)
  endif()
endif()
get_property(_dlpm_sycl_said GLOBAL PROPERTY _dlpm_sycl_said)  # the reason, once per configure
set_property(GLOBAL PROPERTY _dlpm_sycl_said TRUE)
if(_dlpm_sycl_said OR NOT DLPACK_MDSPAN_SYCL_TESTS)
elseif(NOT DLPACK_MDSPAN_SYCL_PYTHON)
  message(STATUS "dlpack_mdspan: SYCL USM tests and example skipped: DLPACK_MDSPAN_SYCL_PYTHON is not set "
                 "(the SYCL venv of scripts/install-deps; the presets take it from $DLPM_SYCL_PYTHON)")
elseif(NOT TARGET dlpack_mdspan::sycl)
  message(STATUS "dlpack_mdspan: SYCL USM tests and example skipped: dlpack_mdspan::sycl is not defined (see above)")
elseif(NOT DLPM_SYCL_OK)
  message(STATUS "dlpack_mdspan: SYCL USM tests and example skipped: ${DLPACK_MDSPAN_SYCL_PYTHON} does not run")
else()
  message(STATUS "dlpack_mdspan: SYCL USM tests and example run with ${DLPACK_MDSPAN_SYCL_PYTHON}")
endif()
