"""numba-cuda's @cuda.jit kernels (issue 38, item 8), every value checked against NumPy.

numba-cuda compiles Python to PTX with NVVM (nvidia-nvvm from PyPI), links it with cuda.core's
Linker and loads the result (cuLibraryLoadData) to launch it with cuda.core's launch
(cuLaunchKernelEx). The Linker uses nvJitLink when cuda.pathfinder finds a libnvJitLink.so.13, and
the driver's cuLinkCreate / cuLinkAddData / cuLinkComplete otherwise. NVIDIA's nvJitLink (a
toolkit's, found through the ld cache, or the nvidia-nvjitlink wheel) makes SASS that only a GPU
runs; cuda-shim ships its own libnvJitLink.so.13 beside libcuda.so.1, which keeps the PTX, and the
launcher and activate() make cuda.pathfinder find it first (docs/kernels.md, "Linking"). So on
cuda-shim the tests first require that cuda.core links with nvJitLink and that the nvJitLink
loaded in the process is ours.
"""
import os

import numpy as np
import pytest

import helpers

from numba import cuda

pytestmark = pytest.mark.kernels


def _mapped(stem):
    """Real paths of the files mapped into this process whose name starts with stem."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith(stem):
                found.add(os.path.realpath(fields[5].strip()))
    return found


def setup_module():
    if helpers.on_cuda_shim():
        from cuda.core import _linker

        assert not _linker._decide_nvjitlink_or_driver(), (
            "cuda.core links with the driver's cuLink* in this process: cuda-shim's libnvJitLink.so.13 "
            "was not found (is it built beside libcuda.so.1?)")
        from cuda.pathfinder import load_nvidia_dynamic_lib

        # The nvJitLink cuda.bindings calls (cuda.pathfinder's answer, cached) is the file mapped
        # beside our libcuda.so.1. (NVIDIA's may be mapped later too: ours hands it LTO-IR.)
        linker = os.path.realpath(load_nvidia_dynamic_lib("nvJitLink").abs_path)
        drivers = _mapped("libcuda.so")
        assert len(drivers) == 1 and linker in _mapped("libnvJitLink.so"), (drivers, linker)
        assert os.path.dirname(linker) == os.path.dirname(drivers.pop()), (
            f"the libnvJitLink.so.13 loaded is {linker}, not cuda-shim's: NVIDIA's makes SASS, which "
            "cuda-shim cannot run (docs/kernels.md, 'Linking')")


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def block_sum(x, partial, total):
    # Shared-memory tree with syncthreads, then one atomic add per block.
    s = cuda.shared.array(256, dtype=np.int64)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    h = 128
    while h > 0:
        if t < h:
            s[t] += s[t + h]
        cuda.syncthreads()
        h //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]
        cuda.atomic.add(total, 0, s[0])


@cuda.jit
def histogram(data, bins):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(bins, data[i], 1)
        i += stride


@cuda.jit
def matmul_2d(a, b, c):
    # Plain 2-D indexing, float64: each element a short dot product, exact for small integers.
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


def test_vector_add():
    n = (1 << 20) + 37
    rng = np.random.default_rng(7)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = cuda.device_array(n, dtype=np.float32)
    vector_add[(n + 255) // 256, 256](cuda.to_device(a), cuda.to_device(b), c)
    np.testing.assert_array_equal(c.copy_to_host(), a + b)


def test_shared_memory_reduction():
    n = 100003
    rng = np.random.default_rng(8)
    x = rng.integers(-(1 << 30), 1 << 30, size=n, dtype=np.int64)
    blocks = (n + 255) // 256
    partial = cuda.device_array(blocks, dtype=np.int64)
    total = cuda.to_device(np.zeros(1, dtype=np.int64))
    block_sum[blocks, 256](cuda.to_device(x), partial, total)
    want = np.array([x[k * 256:(k + 1) * 256].sum() for k in range(blocks)], dtype=np.int64)
    np.testing.assert_array_equal(partial.copy_to_host(), want)
    assert total.copy_to_host()[0] == x.sum()


def test_atomic_histogram():
    n = (1 << 20) + 333
    rng = np.random.default_rng(9)
    data = rng.integers(0, 64, size=n, dtype=np.int32)
    bins = cuda.to_device(np.zeros(64, dtype=np.int32))
    histogram[120, 128](cuda.to_device(data), bins)
    np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(data, minlength=64).astype(np.int32))


def test_2d_grid_and_stream():
    rng = np.random.default_rng(10)
    a = rng.integers(-8, 8, size=(70, 33)).astype(np.float64)
    b = rng.integers(-8, 8, size=(33, 45)).astype(np.float64)
    stream = cuda.stream()
    c = cuda.device_array((70, 45), dtype=np.float64, stream=stream)
    matmul_2d[(5, 3), (16, 16), stream](cuda.to_device(a, stream=stream), cuda.to_device(b, stream=stream), c)
    got = c.copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(got, a @ b)  # integer-valued: exact in any order
