# install() rules and the exported package, so that an outside project can write
#   find_package(dlpack_mdspan CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE dlpack_mdspan::dlpack_mdspan)   # import dlpack_mdspan;
#   target_link_libraries(app PRIVATE dlpack_mdspan::headers)         # #include <dlpack_mdspan/...>
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DLPACK_MDSPAN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/dlpack_mdspan")

set(_dlpm_install_targets dlpack_mdspan_headers dlpack_mdspan_c dlpack_mdspan_c_static)
if(TARGET dlpack_mdspan)
  list(APPEND _dlpm_install_targets dlpack_mdspan)
endif()

install(TARGETS ${_dlpm_install_targets}
  EXPORT dlpack_mdspan_targets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILE_SET CXX_MODULES DESTINATION "${CMAKE_INSTALL_LIBDIR}/cxx/dlpack_mdspan"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(EXPORT dlpack_mdspan_targets
  NAMESPACE dlpack_mdspan::
  FILE dlpack_mdspanTargets.cmake
  DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}"
  CXX_MODULES_DIRECTORY cxx-modules)

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
  DESTINATION "${DLPACK_MDSPAN_INSTALL_CMAKEDIR}")
