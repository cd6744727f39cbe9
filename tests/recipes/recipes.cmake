# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The recipes of docs/consuming.md and the files each one writes, in the order of the doc.
# run_recipe.cmake fails when the doc's markers for a recipe differ from this list (a file or
# the run block missing, or one added), and the completeness test fails when the doc drops
# a recipe or adds one that is not listed here. deb-package and deb need root and a system
# install: scripts/check-deb runs them, CTest only checks their markers.
set(DLPM_RECIPES
  install
  find-package-import
  import-std
  find-package-header
  fetchcontent
  add-subdirectory
  pkg-config-shared
  pkg-config-static
  deb-package
  deb)
set(DLPM_RECIPE_FILES_install "")
set(DLPM_RECIPE_FILES_find-package-import CMakeLists.txt main.cpp)
set(DLPM_RECIPE_FILES_import-std CMakeLists.txt main.cpp)
set(DLPM_RECIPE_FILES_find-package-header CMakeLists.txt main.cpp)
set(DLPM_RECIPE_FILES_fetchcontent CMakeLists.txt main.cpp)
set(DLPM_RECIPE_FILES_add-subdirectory CMakeLists.txt main.cpp)
set(DLPM_RECIPE_FILES_pkg-config-shared main.c)
set(DLPM_RECIPE_FILES_pkg-config-static main.c)
set(DLPM_RECIPE_FILES_deb-package "")
set(DLPM_RECIPE_FILES_deb CMakeLists.txt main.cpp main.c)
