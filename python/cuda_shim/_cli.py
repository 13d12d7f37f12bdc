"""The `cuda-shim` console command: runs the launcher script packaged in cuda_shim/bin.

The launcher (tools/cuda-shim.in) finds the libraries in ../lib relative to itself, so running
the packaged copy needs nothing else; exec keeps its exit status and signals the program's own.
"""
import os
import sys

import cuda_shim


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    launcher = os.path.join(cuda_shim.bindir(), "cuda-shim")
    if not os.access(launcher, os.X_OK):
        sys.stderr.write(f"cuda-shim: the packaged launcher {launcher} is missing or not executable\n")
        return 2
    os.execv(launcher, [launcher] + args)


if __name__ == "__main__":
    sys.exit(main())
