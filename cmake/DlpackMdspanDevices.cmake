# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What each device header needs, found the same way by this build (devices/*/CMakeLists.txt)
# and by a project that loads the installed package (dlpack_mdspanConfig.cmake, beside which
# this file is installed):
#
#   device  header                    needs                                   imported target
#   cuda    <dlpack_mdspan/cuda.hpp>  the CUDA Toolkit >= 12.8 and its CCCL   dlpm::cuda_headers
#                                     (<cuda/std/mdspan>): headers only
#   hip     <dlpack_mdspan/hip.hpp>   HIP's headers (AMD's platform)          dlpm::hip_headers
#   sycl    <dlpack_mdspan/sycl.hpp>  dpctl's C interface: its headers and    dlpm::dpctl
#                                     libDPCTLSyclInterface
#
#   dlpm_find_device_dependency(<device> <found-var> <detail-var> [GLOBAL])
#
# makes the device's imported target (once), and sets <found-var> to TRUE or FALSE and
# <detail-var> to what was found, or why nothing was, in the caller's scope. GLOBAL makes the target visible in every
# directory (this build, whose tests live elsewhere). dpctl is found through the interpreter
# DLPACK_MDSPAN_SYCL_PYTHON names, when that variable is set (dpctl is a Python wheel: its
# headers and library sit in the package folder), otherwise on the search path
# (CMAKE_PREFIX_PATH: a folder holding include/syclinterface/ and the library). The third
# party's headers reach users as SYSTEM headers (the include folders of imported targets are),
# so a project's own warning flags do not judge them. The runtimes are not linked: cuda.hpp
# and hip.hpp call theirs only from device_of()/hip_device_of(), whose users link CUDA::cudart
# or libamdhip64 themselves.
include_guard(GLOBAL)

function(_dlpm_find_cuda_headers found reason scope)
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(${reason} "the CUDA Toolkit was not found (FindCUDAToolkit: nvcc on PATH, or CUDAToolkit_ROOT)" PARENT_SCOPE)
    return()
  endif()
  if(CUDAToolkit_VERSION VERSION_LESS 12.8)
    set(${reason} "cuda.hpp needs CUDA >= 12.8, the toolkit found is ${CUDAToolkit_VERSION}" PARENT_SCOPE)
    return()
  endif()
  find_path(DLPM_CUDA_CCCL_INCLUDE_DIR cuda/std/mdspan
    HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl NO_DEFAULT_PATH)
  if(NOT DLPM_CUDA_CCCL_INCLUDE_DIR)
    set(${reason} "CUDA ${CUDAToolkit_VERSION} was found, but not its <cuda/std/mdspan> (CCCL)" PARENT_SCOPE)
    return()
  endif()
  add_library(dlpm::cuda_headers INTERFACE IMPORTED ${scope})
  set_target_properties(dlpm::cuda_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS};${DLPM_CUDA_CCCL_INCLUDE_DIR}")
  set(${found} TRUE PARENT_SCOPE)
  set(${reason} "CUDA ${CUDAToolkit_VERSION}, CCCL in ${DLPM_CUDA_CCCL_INCLUDE_DIR}" PARENT_SCOPE)
endfunction()

function(_dlpm_find_hip_headers found reason scope)
  set(hints "")
  if(DEFINED ENV{ROCM_PATH})
    list(APPEND hints "$ENV{ROCM_PATH}/include")
  endif()
  find_path(DLPM_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ${hints} /opt/rocm/include)
  if(NOT DLPM_HIP_INCLUDE_DIR)
    set(${reason} "HIP's headers (hip/hip_runtime_api.h) were not found (Debian: libamdhip64-dev; or ROCM_PATH)" PARENT_SCOPE)
    return()
  endif()
  add_library(dlpm::hip_headers INTERFACE IMPORTED ${scope})
  # /usr/include is the compiler's own: naming it again breaks #include_next.
  if(NOT DLPM_HIP_INCLUDE_DIR STREQUAL "/usr/include")
    set_target_properties(dlpm::hip_headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${DLPM_HIP_INCLUDE_DIR}")
  endif()
  set(${found} TRUE PARENT_SCOPE)
  set(${reason} "HIP's headers in ${DLPM_HIP_INCLUDE_DIR}" PARENT_SCOPE)
endfunction()

function(_dlpm_find_dpctl found reason scope)
  set(library_name "${CMAKE_SHARED_LIBRARY_PREFIX}DPCTLSyclInterface${CMAKE_SHARED_LIBRARY_SUFFIX}")
  if(DLPACK_MDSPAN_SYCL_PYTHON)
    # The interpreter's answer is the truth for this configure: no cached search results.
    execute_process(
      COMMAND "${DLPACK_MDSPAN_SYCL_PYTHON}" -c
        "import dpctl, os; print(dpctl.get_include()); print(os.path.dirname(dpctl.__file__)); print(dpctl.__version__)"
      OUTPUT_VARIABLE answer RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE "\n" ";" answer "${answer}")
    list(LENGTH answer n)
    if(NOT rc EQUAL 0 OR NOT n EQUAL 3)
      set(${reason} "dpctl does not import in DLPACK_MDSPAN_SYCL_PYTHON (${DLPACK_MDSPAN_SYCL_PYTHON})" PARENT_SCOPE)
      return()
    endif()
    list(GET answer 0 include_dir)
    list(GET answer 1 package_dir)
    list(GET answer 2 version)
    set(library "${package_dir}/${library_name}")
    set(where "dpctl ${version} of ${DLPACK_MDSPAN_SYCL_PYTHON}")
  else()
    find_path(DLPM_DPCTL_INCLUDE_DIR syclinterface/dpctl_sycl_usm_interface.h PATH_SUFFIXES dpctl/include)
    find_library(DLPM_DPCTL_LIBRARY DPCTLSyclInterface HINTS "${DLPM_DPCTL_INCLUDE_DIR}/..")
    set(include_dir "${DLPM_DPCTL_INCLUDE_DIR}")
    set(library "${DLPM_DPCTL_LIBRARY}")
    set(where "the search path (DLPACK_MDSPAN_SYCL_PYTHON, an interpreter with dpctl, is not set)")
  endif()
  if(NOT EXISTS "${include_dir}/syclinterface/dpctl_sycl_usm_interface.h" OR NOT EXISTS "${library}")
    set(${reason} "dpctl's C interface (syclinterface/ headers and ${library_name}) was not found through ${where}" PARENT_SCOPE)
    return()
  endif()
  add_library(dlpm::dpctl SHARED IMPORTED ${scope})
  set_target_properties(dlpm::dpctl PROPERTIES
    IMPORTED_LOCATION "${library}"
    INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
  set(${found} TRUE PARENT_SCOPE)
  set(${reason} "${library}, from ${where}" PARENT_SCOPE)
endfunction()

function(dlpm_find_device_dependency device found reason)
  cmake_parse_arguments(arg "GLOBAL" "" "" ${ARGN})
  set(target_of_cuda dlpm::cuda_headers)
  set(target_of_hip dlpm::hip_headers)
  set(target_of_sycl dlpm::dpctl)
  if(NOT DEFINED target_of_${device})
    message(FATAL_ERROR "dlpm_find_device_dependency: no device '${device}' (cuda, hip or sycl)")
  endif()
  set(${found} FALSE PARENT_SCOPE)
  set(${reason} "" PARENT_SCOPE)
  if(TARGET ${target_of_${device}})
    set(${found} TRUE PARENT_SCOPE)
    set(${reason} "${target_of_${device}}, made before" PARENT_SCOPE)
    return()
  endif()
  set(scope "")
  if(arg_GLOBAL)
    set(scope GLOBAL)
  endif()
  set(is_found FALSE)
  set(why "")
  if(device STREQUAL "cuda")
    _dlpm_find_cuda_headers(is_found why "${scope}")
  elseif(device STREQUAL "hip")
    _dlpm_find_hip_headers(is_found why "${scope}")
  else()
    _dlpm_find_dpctl(is_found why "${scope}")
  endif()
  set(${found} ${is_found} PARENT_SCOPE)
  set(${reason} "${why}" PARENT_SCOPE)
endfunction()
