# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python -m dlpack_mdspan --cmake_dir | --include_dir | --library_dir | --version | --source_commit"""
import argparse
import sys

import dlpack_mdspan


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlpack_mdspan", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--cmake_dir", action="store_true", help="the folder of dlpack_mdspanConfig.cmake")
    group.add_argument("--include_dir", action="store_true", help="the folder of the C and C++ headers")
    group.add_argument("--library_dir", action="store_true", help="the folder of the libraries")
    group.add_argument("--version", action="store_true", help="the package's version")
    group.add_argument("--source_commit", action="store_true",
                       help="the commit the package was built from (+dirty: with changes), or unknown")
    args = parser.parse_args(argv)
    if args.cmake_dir:
        print(dlpack_mdspan.cmake_dir())
    elif args.include_dir:
        print(dlpack_mdspan.include_dir())
    elif args.library_dir:
        print(dlpack_mdspan.library_dir())
    elif args.source_commit:
        print(dlpack_mdspan.source_commit())
    else:
        print(dlpack_mdspan.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
