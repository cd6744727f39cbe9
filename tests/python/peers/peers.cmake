# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Peers' own DLPack test files, run unchanged but for their producers, which peer_suite.py
# re-exports through us first (a dlpack_mdspan.Tensor stands in for each).
set(DLPM_PEERS_DIR "${CMAKE_CURRENT_LIST_DIR}")

# A CTest test `test`: `python` runs `file` of its installed `package` with every producer
# passed through `reexport` (MODULE:FUNCTION, importable from `pythonpath`), minus the cases
# the `deselect` file names with their reasons; the rewritten file goes to
# <binary dir>/peers/<package>_<file>. Further arguments are VAR=value entries of the
# test's environment (the SYCL runtime's, say).
function(dlpm_peer_suite test flavour python package file reexport deselect pythonpath)
  string(MAKE_C_IDENTIFIER "${package}_${file}" _name)
  dlpm_python_test("${test}" ${flavour} "peers_${_name}"
    "PYTHONPATH=${pythonpath};PYTHONDONTWRITEBYTECODE=1;${ARGN}"
    "${python}" "${DLPM_PEERS_DIR}/peer_suite.py" --package "${package}" --file "${file}" --reexport "${reexport}"
    --deselect "${deselect}" --out "${CMAKE_CURRENT_BINARY_DIR}/peers/${_name}" -- -q -rs -p no:cacheprovider)
endfunction()
