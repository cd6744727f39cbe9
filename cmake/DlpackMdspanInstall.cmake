# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# install() rules and the exported package, so that an outside project can write
#   find_package(dlpack_mdspan CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE dlpack_mdspan::dlpack_mdspan)   # import dlpack_mdspan;
#   target_link_libraries(app PRIVATE dlpack_mdspan::headers)         # #include <dlpack_mdspan/...>
#   target_link_libraries(app PRIVATE dlpack_mdspan::cuda)            # #include <dlpack_mdspan/cuda.hpp>
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DLPACK_MDSPAN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/dlpack_mdspan")

# The pip package installs where no DLPack may be: it carries the header it was built with
# (DLPack's own file, Apache-2.0, copied at install time; the package config prefers it).
option(DLPACK_MDSPAN_INSTALL_DLPACK_HEADER "Install <dlpack/dlpack.h> with the package (the wheel sets it)" OFF)
if(DLPACK_MDSPAN_INSTALL_DLPACK_HEADER)
  install(FILES "${DLPACK_HEADER_FILE}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/dlpack")
endif()
# The module's interface unit, for importers that build the module themselves when this
# install carries no prebuilt one (the pip package is built without it: g++ < 14 cannot).
if(NOT TARGET dlpack_mdspan)
  install(FILES "${PROJECT_SOURCE_DIR}/modules/dlpack_mdspan/dlpack_mdspan.cppm"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/dlpack_mdspan/module")
endif()

# The C facade is installed when it is part of the build (DLPACK_MDSPAN_BUILD_C_API, on at
# top level) or when the Python component, which links it, is built.
set(_dlpm_install_targets dlpack_mdspan_headers)
if(DLPACK_MDSPAN_BUILD_C_API OR TARGET dlpack_mdspan_python)
  list(APPEND _dlpm_install_targets dlpack_mdspan_c dlpack_mdspan_c_static)
  install(FILES "${DLPM_PC_FILE}" DESTINATION "${DLPM_PC_INSTALL_DIR}")
endif()

install(TARGETS ${_dlpm_install_targets}
  EXPORT dlpack_mdspan_targets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(EXPORT dlpack_mdspan_targets
  NAMESPACE dlpack_mdspan::
  FILE dlpack_mdspanTargets.cmake
  DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")

# The module has an export set of its own, which the package config loads only where the
# importing project can build a BMI (a Ninja generator, clang >= 17 or gcc >= 14): headers
# and C consumers on Makefiles, g++ 12 or an older CMake never see a module target.
if(TARGET dlpack_mdspan)
  install(TARGETS dlpack_mdspan
    EXPORT dlpack_mdspan_module_targets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    FILE_SET CXX_MODULES DESTINATION "${CMAKE_INSTALL_LIBDIR}/cxx/dlpack_mdspan")
  install(EXPORT dlpack_mdspan_module_targets
    NAMESPACE dlpack_mdspan::
    FILE dlpack_mdspanModuleTargets.cmake
    DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}"
    CXX_MODULES_DIRECTORY cxx-modules)
endif()

# The Python component has an export set of its own: its target refers to Python3::Module,
# which the package config finds only when the component is asked for.
if(TARGET dlpack_mdspan_python)
  install(TARGETS dlpack_mdspan_python
    EXPORT dlpack_mdspan_python_targets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT dlpack_mdspan_python_targets
    NAMESPACE dlpack_mdspan::
    FILE dlpack_mdspanPythonTargets.cmake
    DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
endif()

# Each device part has an export set of its own, which the package config loads only where
# the importing project finds what the header needs (DlpackMdspanDevices.cmake, installed
# beside the config, repeats the lookups of this build). A part not defined here (its option
# off, or its dependency missing on this machine) is not installed, nor is its header.
foreach(_dlpm_device IN ITEMS cuda hip sycl)
  if(TARGET dlpack_mdspan_${_dlpm_device})
    string(TOUPPER "${_dlpm_device}" _dlpm_device_upper)
    install(TARGETS dlpack_mdspan_${_dlpm_device}
      EXPORT dlpack_mdspan_${_dlpm_device}_targets
      FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
    install(EXPORT dlpack_mdspan_${_dlpm_device}_targets
      NAMESPACE dlpack_mdspan::
      FILE dlpack_mdspan${_dlpm_device_upper}Targets.cmake
      DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
  endif()
endforeach()

# The MPI part has an export set of its own: its target links MPI::MPI_C, which the package
# config finds (FindMPI, C only) only where the importing project asks for COMPONENTS mpi.
if(TARGET dlpack_mdspan_mpi)
  install(TARGETS dlpack_mdspan_mpi
    EXPORT dlpack_mdspan_mpi_targets
    FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT dlpack_mdspan_mpi_targets
    NAMESPACE dlpack_mdspan::
    FILE dlpack_mdspanMPITargets.cmake
    DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
endif()

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/dlpack_mdspanConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/dlpack_mdspanConfig.cmake"
  INSTALL_DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/dlpack_mdspanConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)

install(FILES
  "${PROJECT_BINARY_DIR}/dlpack_mdspanConfig.cmake"
  "${PROJECT_BINARY_DIR}/dlpack_mdspanConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/FindDLPackHeader.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/DlpackMdspanDevices.cmake"
  DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
