# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs one recipe of docs/consuming.md exactly as the doc writes it.
#
# The doc marks each code block of a recipe with an HTML comment on the line before its
# opening fence (invisible when rendered):
#   <!-- recipe: NAME[,NAME...] file=PATH -->   the block is the file PATH of those recipes
#   <!-- recipe: NAME run -->                    the block is NAME's shell commands
#
#   cmake -DMODE=check -DDOC=docs/consuming.md -P run_recipe.cmake
#       every recipe of recipes.cmake is in the doc with exactly its files and one run
#       block, and the doc has no other recipe
#   cmake -DMODE=run -DDOC=... -DRECIPE=NAME -DWORK=DIR -DBASH=bash
#         [-DPREFIX=DIR [-DFRESH_PREFIX=ON]] [-DSOURCE=DIR] [-DTARBALL=FILE] -P run_recipe.cmake
#       checks NAME's markers, writes its files into the empty directory DIR/project and runs
#       its commands there with `bash -euo pipefail`; PREFIX, SOURCE and TARBALL become the
#       DLPACK_MDSPAN_PREFIX, _SOURCE and _TARBALL the doc asks the user to set (FRESH_PREFIX
#       empties PREFIX first), and nothing else of the caller's build environment is passed on
#   cmake -DMODE=stage -DBUILD_DIR=DIR -DSTAGE=DIR -P run_recipe.cmake
#       a fresh `cmake --install BUILD_DIR --prefix STAGE`
cmake_minimum_required(VERSION 3.28)
include("${CMAKE_CURRENT_LIST_DIR}/recipes.cmake")

if(MODE STREQUAL "stage")
  file(REMOVE_RECURSE "${STAGE}")
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}"
                  OUTPUT_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${STAGE} failed (${rc})")
  endif()
  message(STATUS "staged ${BUILD_DIR} in ${STAGE}")
  return()
endif()

# ---- parse the doc: blocks 0..nblocks-1, each with names, kind (file/run), path, text ----
if(NOT EXISTS "${DOC}")
  message(FATAL_ERROR "no ${DOC}")
endif()
file(READ "${DOC}" rest)
string(REGEX MATCHALL "<!-- recipe:" all_markers "${rest}")
list(LENGTH all_markers nmarkers)
set(marker_re "<!-- recipe: ([A-Za-z0-9_,-]+) (file=([^ \n]+)|run) -->[ \t]*\n```[^\n]*\n")
set(nblocks 0)
while(TRUE)
  string(REGEX MATCH "${marker_re}" header "${rest}")
  if(header STREQUAL "")
    break()
  endif()
  set(names "${CMAKE_MATCH_1}")
  set(kind "${CMAKE_MATCH_2}")
  set(path "${CMAKE_MATCH_3}")
  string(FIND "${rest}" "${header}" at)
  string(LENGTH "${header}" header_length)
  math(EXPR body_at "${at} + ${header_length}")
  string(SUBSTRING "${rest}" ${body_at} -1 rest)
  string(FIND "${rest}" "\n```" close_at)
  if(close_at LESS 0)
    message(FATAL_ERROR "${DOC}: the block marked `recipe: ${names} ${kind}` is not closed")
  endif()
  string(SUBSTRING "${rest}" 0 ${close_at} body)
  math(EXPR after "${close_at} + 4")
  string(SUBSTRING "${rest}" ${after} -1 rest)
  string(REPLACE "," ";" names "${names}")
  set(block_${nblocks}_names "${names}")
  if(kind STREQUAL "run")
    set(block_${nblocks}_kind run)
    list(LENGTH names n)
    if(NOT n EQUAL 1)
      message(FATAL_ERROR "${DOC}: a run block belongs to one recipe, not `${names}`")
    endif()
  else()
    set(block_${nblocks}_kind file)
    set(block_${nblocks}_path "${path}")
  endif()
  set(block_${nblocks}_text "${body}\n")
  math(EXPR nblocks "${nblocks} + 1")
endwhile()
if(NOT nblocks EQUAL nmarkers)
  message(FATAL_ERROR "${DOC}: ${nmarkers} `<!-- recipe:` markers, but only ${nblocks} of them are "
                      "well-formed and directly followed by a fenced code block")
endif()

# The files and run blocks of recipe NAME, as found in the doc: <NAME>_files, <NAME>_runs
# (block indices), <NAME>_file_blocks.
set(doc_names "")
if(nblocks GREATER 0)
  math(EXPR last "${nblocks} - 1")
  foreach(i RANGE ${last})
    foreach(name IN LISTS block_${i}_names)
      list(APPEND doc_names "${name}")
      if(block_${i}_kind STREQUAL "run")
        list(APPEND ${name}_runs ${i})
      else()
        if("${block_${i}_path}" IN_LIST ${name}_files)
          message(FATAL_ERROR "${DOC}: recipe ${name} has two blocks for ${block_${i}_path}")
        endif()
        list(APPEND ${name}_files "${block_${i}_path}")
        list(APPEND ${name}_file_blocks ${i})
      endif()
    endforeach()
  endforeach()
endif()
list(REMOVE_DUPLICATES doc_names)

# Recipe NAME's markers must be exactly what recipes.cmake says.
function(check_recipe name)
  if(NOT name IN_LIST DLPM_RECIPES)
    message(FATAL_ERROR "${DOC} has a recipe `${name}` that tests/recipes/recipes.cmake does not list")
  endif()
  if(NOT name IN_LIST doc_names)
    message(FATAL_ERROR "${DOC} has no recipe `${name}` (no `<!-- recipe: ${name} ... -->` markers)")
  endif()
  list(LENGTH ${name}_runs nruns)
  if(NOT nruns EQUAL 1)
    message(FATAL_ERROR "${DOC}: recipe `${name}` has ${nruns} run blocks (`<!-- recipe: ${name} run -->`), not 1")
  endif()
  set(want ${DLPM_RECIPE_FILES_${name}})
  set(have ${${name}_files})
  list(SORT want)
  list(SORT have)
  if(NOT "${want}" STREQUAL "${have}")
    message(FATAL_ERROR "${DOC}: recipe `${name}` has the files [${have}], tests/recipes/recipes.cmake "
                        "expects [${want}]")
  endif()
endfunction()

if(MODE STREQUAL "check")
  foreach(name IN LISTS doc_names DLPM_RECIPES)
    check_recipe("${name}")
  endforeach()
  list(LENGTH DLPM_RECIPES n)
  message(STATUS "${DOC}: all ${n} recipes present, each with its files and one run block")
  return()
endif()

if(NOT MODE STREQUAL "run")
  message(FATAL_ERROR "MODE must be check, run or stage")
endif()
check_recipe("${RECIPE}")

# ---- write the files into an empty project directory and run the commands there ----------
set(project_dir "${WORK}/project")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${project_dir}")
foreach(i IN LISTS ${RECIPE}_file_blocks)
  file(WRITE "${project_dir}/${block_${i}_path}" "${block_${i}_text}")
endforeach()
list(GET ${RECIPE}_runs 0 run_block)
file(WRITE "${WORK}/commands.sh" "${block_${run_block}_text}")

if(PREFIX AND FRESH_PREFIX)
  file(REMOVE_RECURSE "${PREFIX}")
endif()
# The user's shell as the doc assumes it: only what the doc says the user sets, none of the
# variables through which a build environment could help the recipe along.
set(env_args "")
foreach(var CMAKE_PREFIX_PATH CMAKE_GENERATOR CMAKE_BUILD_TYPE CMAKE_INSTALL_PREFIX CMAKE_TOOLCHAIN_FILE
            CMAKE_EXPORT_COMPILE_COMMANDS CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER
            CMAKE_CUDA_COMPILER_LAUNCHER
            PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH LIBRARY_PATH
            CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS DESTDIR
            MAKEFLAGS dlpack_mdspan_DIR dlpack_DIR
            DLPACK_MDSPAN_PREFIX DLPACK_MDSPAN_SOURCE DLPACK_MDSPAN_TARBALL)
  list(APPEND env_args "--unset=${var}")
endforeach()
set(supplied "")
foreach(pair "PREFIX;DLPACK_MDSPAN_PREFIX" "SOURCE;DLPACK_MDSPAN_SOURCE" "TARBALL;DLPACK_MDSPAN_TARBALL")
  list(GET pair 0 arg)
  list(GET pair 1 var)
  if(DEFINED ${arg} AND NOT "${${arg}}" STREQUAL "")
    list(APPEND env_args "${var}=${${arg}}")
    string(APPEND supplied "  ${var}=${${arg}}\n")
  endif()
endforeach()
if(NOT BASH)
  set(BASH bash)
endif()

string(JOIN ", " file_list ${${RECIPE}_files})
message(STATUS "recipe ${RECIPE} of ${DOC}\nfiles: ${file_list}\nenvironment:\n${supplied}"
               "commands (bash -euo pipefail, in ${project_dir}):\n${block_${run_block}_text}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${env_args} "${BASH}" -euo pipefail "${WORK}/commands.sh"
                WORKING_DIRECTORY "${project_dir}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "recipe ${RECIPE} failed (exit status ${rc})")
endif()
message(STATUS "recipe ${RECIPE}: passed")
