# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds DLPack >= 1.0 as the imported target dlpack::dlpack.
#
# Debian's libdlpack-dev 1.3 ships a dlpackConfigVersion.cmake that still says 0.6, so a
# versioned find_package(dlpack 1.0 CONFIG) would reject a good install. We therefore find
# the package without a version and read the real one from <dlpack/dlpack.h>.
#
# An install that carries its own copy of the header (the pip package:
# DLPACK_MDSPAN_INSTALL_DLPACK_HEADER) sets DLPM_DLPACK_BUNDLED_INCLUDE in its package config;
# that copy is used first, so the package works where no DLPack is installed.
include_guard(GLOBAL)

if(DLPM_DLPACK_BUNDLED_INCLUDE AND EXISTS "${DLPM_DLPACK_BUNDLED_INCLUDE}/dlpack/dlpack.h" AND NOT TARGET dlpack::dlpack)
  add_library(dlpack::dlpack INTERFACE IMPORTED)
  set_target_properties(dlpack::dlpack PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${DLPM_DLPACK_BUNDLED_INCLUDE}")
endif()
if(NOT TARGET dlpack::dlpack)
  find_package(dlpack CONFIG QUIET)
endif()
if(NOT TARGET dlpack::dlpack)
  find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h)
  if(DLPACK_INCLUDE_DIR)
    add_library(dlpack::dlpack INTERFACE IMPORTED)
    set_target_properties(dlpack::dlpack PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${DLPACK_INCLUDE_DIR}")
  endif()
endif()
if(NOT TARGET dlpack::dlpack)
  message(FATAL_ERROR
    "dlpack_mdspan needs the DLPack headers (>= 1.0), and neither dlpackConfig.cmake nor "
    "<dlpack/dlpack.h> was found. On Debian run scripts/install-deps (it installs libdlpack-dev "
    "1.x), or point CMAKE_PREFIX_PATH at a DLPack >= 1.0 install.")
endif()

get_target_property(_dlpm_dlpack_inc dlpack::dlpack INTERFACE_INCLUDE_DIRECTORIES)
find_file(_dlpm_dlpack_h dlpack/dlpack.h PATHS ${_dlpm_dlpack_inc} NO_DEFAULT_PATH NO_CACHE)
if(NOT _dlpm_dlpack_h)
  find_file(_dlpm_dlpack_h dlpack/dlpack.h NO_CACHE)
endif()
file(STRINGS "${_dlpm_dlpack_h}" _dlpm_major REGEX "^#define DLPACK_MAJOR_VERSION [0-9]+")
file(STRINGS "${_dlpm_dlpack_h}" _dlpm_minor REGEX "^#define DLPACK_MINOR_VERSION [0-9]+")
string(REGEX MATCH "[0-9]+$" DLPACK_VERSION_MAJOR "${_dlpm_major}")
string(REGEX MATCH "[0-9]+$" DLPACK_VERSION_MINOR "${_dlpm_minor}")
if(NOT DLPACK_VERSION_MAJOR OR DLPACK_VERSION_MAJOR LESS 1)
  message(FATAL_ERROR
    "dlpack_mdspan needs DLPack >= 1.0 (DLManagedTensorVersioned), but ${_dlpm_dlpack_h} is version "
    "'${DLPACK_VERSION_MAJOR}.${DLPACK_VERSION_MINOR}' (Debian bookworm ships 0.6). "
    "Run scripts/install-deps to install libdlpack-dev 1.x.")
endif()
set(DLPACK_VERSION "${DLPACK_VERSION_MAJOR}.${DLPACK_VERSION_MINOR}")
set(DLPACK_HEADER_FILE "${_dlpm_dlpack_h}")  # the file itself (the pip package installs a copy)
message(STATUS "DLPack ${DLPACK_VERSION}: ${_dlpm_dlpack_h}")
