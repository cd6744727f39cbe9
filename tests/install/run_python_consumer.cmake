# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Stage an install of BUILD_DIR into STAGE, then build tests/install/python_consumer's
# extension against it twice, as outside users would, and run check_consumer.py with it:
#   1. CMake: find_package(dlpack_mdspan COMPONENTS python), Python3_add_library, linking
#      dlpack_mdspan::python only; libdlpack_mdspan_c.so found through the build rpath
#      CMake writes for the imported library (LD_LIBRARY_PATH is unset).
#   2. pkg-config: cc -shared -fPIC consumer_ext.c $(pkg-config --cflags --libs
#      dlpack_mdspan_python) $(python3-config --includes) -Wl,-rpath,<the package's libdir>.
# Both are imported by PYTHON (the interpreter the component was built for) and, when given
# and of the same minor version, by VENV_PYTHON (more frameworks). Any failing step fails.
#
#   cmake -DBUILD_DIR=... -DSTAGE=... -DSOURCE=<python_consumer> -DWORK=... -DGENERATOR=...
#         -DCC=... -DC_FLAGS=... -DMODULE_LINKER_FLAGS=... -DBUILD_TYPE=... -DPYTHON=...
#         [-DVENV_PYTHON=...] -DPKG_CONFIG=... -DSYSTEM_CC=... -DREADELF=...
#         -P run_python_consumer.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/step.cmake")

unset(ENV{LD_LIBRARY_PATH})
unset(ENV{PYTHONPATH})
unset(ENV{PKG_CONFIG_PATH})
set(ENV{PYTHONDONTWRITEBYTECODE} 1)
file(REMOVE_RECURSE "${STAGE}" "${WORK}")
step("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${STAGE}")

# Runs check_consumer.py with `python`, the extension in `dir`.
function(check python dir)
  set(ENV{PYTHONPATH} "${dir}")
  step("${python}" "${SOURCE}/check_consumer.py")
  unset(ENV{PYTHONPATH})
  message(STATUS "${step_output}")
endfunction()

# (No semicolons in arguments: step() passes them on as a list.)
step("${PYTHON}" -c "import sys, sysconfig\nprint('%d.%d' % sys.version_info[:2])\nprint(sysconfig.get_config_var('EXT_SUFFIX'))")
string(REPLACE "\n" ";" info "${step_output}")
list(GET info 0 python_version)
list(GET info 1 ext_suffix)
set(pythons "${PYTHON}")
if(VENV_PYTHON AND EXISTS "${VENV_PYTHON}")
  step("${VENV_PYTHON}" -c "import sys\nprint('%d.%d' % sys.version_info[:2])")
  if(step_output STREQUAL python_version)
    list(APPEND pythons "${VENV_PYTHON}")
  else()
    message(STATUS "${VENV_PYTHON} is Python ${step_output}, not ${python_version}: not used")
  endif()
endif()

# ---- 1. CMake ------------------------------------------------------------------------------
set(build "${WORK}/cmake")
step("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${build}" -G "${GENERATOR}"
     "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_C_FLAGS=${C_FLAGS}" "-DCMAKE_MODULE_LINKER_FLAGS=${MODULE_LINKER_FLAGS}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${STAGE}" "-DPython3_EXECUTABLE=${PYTHON}")
step("${CMAKE_COMMAND}" --build "${build}")
file(GLOB module "${build}/consumer_ext*${ext_suffix}")
if(NOT module)
  message(FATAL_ERROR "no consumer_ext*${ext_suffix} in ${build}")
endif()
step("${READELF}" -d "${module}")
if(NOT step_output MATCHES "NEEDED[^\n]*libdlpack_mdspan_c\\.so")
  message(FATAL_ERROR "${module} does not depend on libdlpack_mdspan_c.so:\n${step_output}")
endif()
string(REGEX MATCH "\\((RUNPATH|RPATH)\\)[^\n]*" runpath "${step_output}")
message(STATUS "CMake-built ${module}: ${runpath}")
foreach(python IN LISTS pythons)
  check("${python}" "${build}")
endforeach()

# ---- 2. pkg-config -------------------------------------------------------------------------
file(GLOB_RECURSE pc_file "${STAGE}/*/dlpack_mdspan_python.pc")
if(NOT pc_file)
  message(FATAL_ERROR "no dlpack_mdspan_python.pc installed under ${STAGE}")
endif()
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
get_filename_component(python_bin "${PYTHON}" DIRECTORY)
set(python_config "${python_bin}/python${python_version}-config")
if(NOT EXISTS "${python_config}")
  set(python_config python3-config)
endif()
set(out "${WORK}/pkg-config")
file(MAKE_DIRECTORY "${out}")
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
set(command "'${SYSTEM_CC}' -shared -fPIC -o '${out}/consumer_ext${ext_suffix}' '${SOURCE}/consumer_ext.c' \
$('${PKG_CONFIG}' --cflags --libs dlpack_mdspan_python) $('${python_config}' --includes) \
-Wl,-rpath,$('${PKG_CONFIG}' --variable=libdir dlpack_mdspan)")
message(STATUS "PKG_CONFIG_PATH=${pc_dir} ${command}")
step(sh -c "${command}")
step(sh -c "'${PKG_CONFIG}' --cflags --libs dlpack_mdspan_python")
message(STATUS "pkg-config --cflags --libs dlpack_mdspan_python: ${step_output}")
foreach(python IN LISTS pythons)
  check("${python}" "${out}")
endforeach()
