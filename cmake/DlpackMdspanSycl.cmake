# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# dpctl's C interface (libDPCTLSyclInterface and its headers, from the `dpctl` wheel), for
# the SYCL USM tests (tests/modules/dlpack_mdspan/sycl, tests/python/sycl): found through a
# Python interpreter that has dpctl, DLPACK_MDSPAN_SYCL_PYTHON (cmake/DlpackMdspanPython.cmake;
# the SYCL venv of scripts/install-deps).
# Off unless found. Sets DLPM_SYCL_OK, DLPM_SYCL_PYTHON and DLPM_SYCL_ENVIRONMENT (the
# VAR=value list a process needs to see the OpenCL CPU device of the intel-opencl-rt wheel),
# and makes the imported target dlpm::dpctl. Not include_guard(GLOBAL): the variables are
# directory-scoped, so each includer finds them (the target is made once).

option(DLPACK_MDSPAN_SYCL_TESTS "Build and run the SYCL USM (kDLOneAPI) tests when dpctl is found" ON)
include(DlpackMdspanPython)

set(DLPM_SYCL_OK FALSE)
if(DLPACK_MDSPAN_SYCL_TESTS AND DLPACK_MDSPAN_SYCL_PYTHON)
  execute_process(
    COMMAND "${DLPACK_MDSPAN_SYCL_PYTHON}" -c
      "import dpctl, os, sys; print(dpctl.get_include()); print(os.path.dirname(dpctl.__file__)); print(sys.prefix); print(dpctl.__version__)"
    OUTPUT_VARIABLE _dlpm_dpctl RESULT_VARIABLE _dlpm_dpctl_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_dlpm_dpctl_rc EQUAL 0)
    string(REPLACE "\n" ";" _dlpm_dpctl "${_dlpm_dpctl}")
    list(GET _dlpm_dpctl 0 _dlpm_dpctl_include)
    list(GET _dlpm_dpctl 1 _dlpm_dpctl_dir)
    list(GET _dlpm_dpctl 2 _dlpm_sycl_prefix)
    list(GET _dlpm_dpctl 3 _dlpm_dpctl_version)
    find_library(DLPM_DPCTL_LIBRARY DPCTLSyclInterface PATHS "${_dlpm_dpctl_dir}" NO_DEFAULT_PATH)
    if(DLPM_DPCTL_LIBRARY AND EXISTS "${_dlpm_dpctl_include}/syclinterface/dpctl_sycl_usm_interface.h"
       AND NOT TARGET dlpm::dpctl)
      add_library(dlpm::dpctl SHARED IMPORTED GLOBAL)
      # dpctl's headers are third-party code: SYSTEM, so -Werror does not judge them.
      set_target_properties(dlpm::dpctl PROPERTIES
        IMPORTED_LOCATION "${DLPM_DPCTL_LIBRARY}"
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_dlpm_dpctl_include}"
        INTERFACE_INCLUDE_DIRECTORIES "${_dlpm_dpctl_include}")
      message(STATUS "dlpack_mdspan: SYCL USM tests use dpctl ${_dlpm_dpctl_version} (${DLPM_DPCTL_LIBRARY})")
    endif()
    if(TARGET dlpm::dpctl)
      # The OpenCL ICD loader reads OCL_ICD_FILENAMES; the runtime's libraries sit in the
      # venv's lib folder, which the ICD does not search by itself.
      set(DLPM_SYCL_ENVIRONMENT "LD_LIBRARY_PATH=${_dlpm_sycl_prefix}/lib")
      if(EXISTS "${_dlpm_sycl_prefix}/lib/libintelocl.so")
        list(APPEND DLPM_SYCL_ENVIRONMENT "OCL_ICD_FILENAMES=${_dlpm_sycl_prefix}/lib/libintelocl.so")
      endif()
      # Under ASan, the runtimes' process-lifetime allocations are not our leaks.
      list(APPEND DLPM_SYCL_ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/support/sycl_runtime.lsan.supp")
      set(DLPM_SYCL_PYTHON "${DLPACK_MDSPAN_SYCL_PYTHON}")
      set(DLPM_SYCL_OK TRUE)
    endif()
  endif()
endif()
get_property(_dlpm_sycl_said GLOBAL PROPERTY _dlpm_sycl_said)  # the reason, once per configure
set_property(GLOBAL PROPERTY _dlpm_sycl_said TRUE)
if(_dlpm_sycl_said)
elseif(DLPACK_MDSPAN_SYCL_TESTS AND NOT DLPACK_MDSPAN_SYCL_PYTHON)
  message(STATUS "dlpack_mdspan: SYCL USM tests skipped: DLPACK_MDSPAN_SYCL_PYTHON is not set "
                 "(the SYCL venv of scripts/install-deps; the presets take it from $DLPM_SYCL_PYTHON)")
elseif(DLPACK_MDSPAN_SYCL_TESTS AND NOT DLPM_SYCL_OK)
  message(STATUS "dlpack_mdspan: dpctl not found through ${DLPACK_MDSPAN_SYCL_PYTHON}; SYCL USM tests skipped "
                 "(scripts/install-deps makes a venv with it)")
endif()
