"""`python -m cuda_shim ARGS`: the same as the `cuda-shim` console command."""
import sys

from cuda_shim._cli import main

sys.exit(main())
