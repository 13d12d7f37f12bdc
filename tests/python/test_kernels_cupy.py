"""CuPy's own kernels in its PTX mode (issue 38, item 8): elementwise, reduction, raw kernels
and plain array arithmetic, every value checked against NumPy.

CuPy compiles with NVRTC (nvidia-cuda-nvrtc from PyPI, found through cuda.pathfinder) and, by
default, asks it for SASS (-arch=sm_XX), which only a GPU runs. CUPY_COMPILE_WITH_PTX=1 (read
once, when cupy.cuda.compiler is imported) makes it ask for PTX (-arch=compute_XX) and load
that with cuModuleLoadData: what cuda-shim's engine runs. On cuda-shim these tests require the
variable (the launcher is to set it, issue 38 item 10; CTest sets it for this file until then).
Kernels are cached in memory only (CUPY_CACHE_IN_MEMORY), so a SASS cache on disk from another
run is never picked up.
"""
import os

os.environ.setdefault("CUPY_CACHE_IN_MEMORY", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import helpers  # noqa: E402

import cupy as cp  # noqa: E402
from cupy.cuda import compiler  # noqa: E402

pytestmark = pytest.mark.kernels

N = (1 << 20) + 3  # CuPy's own launch sizes leave a partial last block


def setup_module():
    if helpers.on_cuda_shim():
        assert compiler._use_ptx, (
            "CUPY_COMPILE_WITH_PTX is not 1 in this process: CuPy would compile SASS, which "
            "cuda-shim cannot run")


def test_compiles_ptx_when_asked():
    # The option CuPy hands NVRTC for this device.
    opt, method = compiler._get_arch_for_options_for_nvrtc()
    if compiler._use_ptx:
        assert opt.startswith("-arch=compute_") and method == "ptx"
    else:
        assert opt.startswith("-arch=sm_") and method == "cubin"


def test_plain_arithmetic():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(N, dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    da, db = cp.asarray(a), cp.asarray(b)
    np.testing.assert_array_equal(cp.asnumpy(da + db), a + b)
    np.testing.assert_array_equal(cp.asnumpy(da * db), a * b)
    np.testing.assert_array_equal(cp.asnumpy(cp.arange(N, dtype=cp.int64)), np.arange(N, dtype=np.int64))
    x = cp.empty(N, dtype=cp.int32)
    x.fill(-7)
    assert (cp.asnumpy(x) == -7).all()


def _check_builtin_reductions():
    rng = np.random.default_rng(11)
    ints = rng.integers(-1000, 1000, size=N, dtype=np.int64)
    d = cp.asarray(ints)
    assert int(d.sum()) == int(ints.sum())
    assert int(d.max()) == int(ints.max())
    assert int(d.min()) == int(ints.min())
    m = ints[: 999 * 1000].reshape(999, 1000)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(m).sum(axis=0)), m.sum(axis=0))
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(m).sum(axis=1)), m.sum(axis=1))


def test_builtin_reductions_jit():
    # CuPy's own reduction kernels, compiled with NVRTC here: no accelerator.
    from cupy._core import _accelerator as acc

    routine, reduction = acc.get_routine_accelerators(), acc.get_reduction_accelerators()
    acc.set_routine_accelerators([])
    acc.set_reduction_accelerators([])
    try:
        _check_builtin_reductions()
    finally:
        acc.set_routine_accelerators(routine)
        acc.set_reduction_accelerators(reduction)


def test_builtin_reductions_default_accelerators():
    # As a user gets them: CuPy 14's default accelerators are CUB for routines (a full-array
    # sum calls cupy/cuda/cub.so, precompiled: SASS for sm_75..sm_120 and PTX for compute_120
    # only, which an sm_90 device cannot take) and for reductions (CUB block reductions
    # compiled with NVRTC, so PTX here).
    _check_builtin_reductions()


def test_elementwise_kernel():
    k = cp.ElementwiseKernel(
        "int64 x, int64 y", "int64 z",
        "z = x * 3 - y + (i & 1)",  # i: the element's index
        "kernels_affine")
    rng = np.random.default_rng(4)
    x = rng.integers(-(1 << 40), 1 << 40, size=N, dtype=np.int64)
    y = rng.integers(-(1 << 40), 1 << 40, size=N, dtype=np.int64)
    got = cp.asnumpy(k(cp.asarray(x), cp.asarray(y)))
    np.testing.assert_array_equal(got, x * 3 - y + (np.arange(N) & 1))
    # Broadcasting a scalar, float32: x - y and a multiply by 0.5 are exact to compare.
    kf = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * 0.5f", "kernels_half_diff")
    xf = rng.standard_normal(N, dtype=np.float32)
    got = cp.asnumpy(kf(cp.asarray(xf), np.float32(1.25)))
    np.testing.assert_array_equal(got, (xf - np.float32(1.25)) * np.float32(0.5))


def test_reduction_kernel():
    sum_sq = cp.ReductionKernel(
        "int64 x", "int64 y",
        "x * x", "a + b", "y = a", "0",
        "kernels_sum_sq")
    rng = np.random.default_rng(5)
    x = rng.integers(-3000, 3000, size=N, dtype=np.int64)
    assert int(sum_sq(cp.asarray(x))) == int((x * x).sum())
    # Along an axis: one reduction per row, rows of an odd length.
    m = rng.integers(-100, 100, size=(37, 1001), dtype=np.int64)
    np.testing.assert_array_equal(cp.asnumpy(sum_sq(cp.asarray(m), axis=1)), (m * m).sum(axis=1))


RAW = r"""
extern "C" __global__ void raw_add(const float* a, const float* b, float* c, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void raw_block_max(const int* in, int* out, unsigned int n) {
  __shared__ int s[256];
  unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : -2147483647 - 1;
  __syncthreads();
  for (unsigned int h = 128; h >= 32; h >>= 1) {
    if (t < h) s[t] = max(s[t], s[t + h]);
    __syncthreads();
  }
  if (t < 32) {
    int v = s[t];
    for (int off = 16; off > 0; off >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, off));
    if (t == 0) out[blockIdx.x] = v;
  }
}
"""


def test_raw_kernel():
    add = cp.RawKernel(RAW, "raw_add")
    bmax = cp.RawKernel(RAW, "raw_block_max")
    rng = np.random.default_rng(6)
    a = rng.standard_normal(N, dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32)
    c = cp.full(N, cp.nan, dtype=cp.float32)
    add(((N + 255) // 256,), (256,), (cp.asarray(a), cp.asarray(b), c, np.uint32(N)))
    np.testing.assert_array_equal(cp.asnumpy(c), a + b)
    v = rng.integers(-(1 << 30), 1 << 30, size=N, dtype=np.int32)
    blocks = (N + 255) // 256
    out = cp.zeros(blocks, dtype=cp.int32)
    bmax((blocks,), (256,), (cp.asarray(v), out, np.uint32(N)))
    want = np.array([v[k * 256:(k + 1) * 256].max() for k in range(blocks)], dtype=np.int32)
    np.testing.assert_array_equal(cp.asnumpy(out), want)
