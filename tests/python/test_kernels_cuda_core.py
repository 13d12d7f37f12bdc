"""cuda.core compiling CUDA C++ to PTX with NVRTC and launching it (issue 38, item 8).

Program(code, code_type="c++").compile("ptx") gives an ObjectCode holding PTX text; get_kernel
loads it (cuLibraryLoadData) and launch() runs it (cuLaunchKernelEx). Every output value is
checked on the host. Runs unchanged on NVIDIA's driver, where the expectations come from.
"""
import numpy as np
import pytest

import helpers

from cuda.core import LaunchConfig, Program, ProgramOptions, launch

pytestmark = pytest.mark.kernels

VECTOR_ADD = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""

# Block tree in shared memory with __syncthreads, a warp-shuffle last stage, one 64-bit
# atomicAdd per block for the total and a store per block for its partial sum.
BLOCK_SUM = r"""
#define BLOCK 256
extern "C" __global__ void block_sum(const int* in, long long* partial, unsigned long long* total, unsigned int n) {
  __shared__ long long s[BLOCK];
  unsigned int tid = threadIdx.x, i = blockIdx.x * (2 * BLOCK) + tid;
  long long v = 0;
  if (i < n) v = in[i];
  if (i + BLOCK < n) v += in[i + BLOCK];
  s[tid] = v;
  __syncthreads();
  for (unsigned int half = BLOCK / 2; half > 32; half >>= 1) {
    if (tid < half) s[tid] += s[tid + half];
    __syncthreads();
  }
  if (tid < 32) {
    long long w = s[tid] + s[tid + 32];
    for (int off = 16; off > 0; off >>= 1) w += __shfl_down_sync(0xffffffffu, w, off);
    if (tid == 0) {
      partial[blockIdx.x] = w;
      atomicAdd(total, (unsigned long long)w);
    }
  }
}
"""


def _kernel(device, code, name):
    prog = Program(code, code_type="c++", options=ProgramOptions(arch=f"sm_{device.arch}", name=name))
    obj = prog.compile("ptx")
    assert obj.code_type == "ptx"
    ptx = obj.code if isinstance(obj.code, bytes) else str(obj.code).encode()
    assert b".entry " + name.encode() in ptx, "NVRTC gave no PTX entry for " + name
    return obj.get_kernel(name)


def _upload(device, stream, array):
    buf = device.allocate(array.nbytes, stream=stream)
    helpers.write_bytes(buf, array.tobytes(), stream)
    return buf


def _download(buf, stream, dtype, count):
    return np.frombuffer(helpers.read_bytes(buf, stream, count * np.dtype(dtype).itemsize), dtype=dtype).copy()


def test_vector_add_from_ptx(device, stream):
    kernel = _kernel(device, VECTOR_ADD, "vector_add")
    assert kernel.num_arguments == 4
    n = (1 << 20) + 37  # the last block partial
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db = _upload(device, stream, a), _upload(device, stream, b)
    # A canary of 64 floats past n: the last block's idle threads must not write.
    dc = _upload(device, stream, np.full(n + 64, np.nan, dtype=np.float32))
    block = 256
    launch(stream, LaunchConfig(grid=(n + block - 1) // block, block=block), kernel, da, db, dc, np.uint32(n))
    c = _download(dc, stream, np.float32, n + 64)
    np.testing.assert_array_equal(c[:n], a + b)  # one IEEE add each: exact
    assert np.isnan(c[n:]).all(), "the kernel wrote past n"
    for buf in (da, db, dc):
        buf.close(stream)


def test_reduction_from_ptx(device, stream):
    kernel = _kernel(device, BLOCK_SUM, "block_sum")
    n = 300007
    rng = np.random.default_rng(2)
    data = rng.integers(-(1 << 20), 1 << 20, size=n, dtype=np.int32)
    blocks = (n + 511) // 512
    din = _upload(device, stream, data)
    dpart = _upload(device, stream, np.full(blocks, -1, dtype=np.int64))
    dtotal = _upload(device, stream, np.zeros(1, dtype=np.uint64))
    launch(stream, LaunchConfig(grid=blocks, block=256), kernel, din, dpart, dtotal, np.uint32(n))
    part = _download(dpart, stream, np.int64, blocks)
    want = np.array([data[k * 512:(k + 1) * 512].astype(np.int64).sum() for k in range(blocks)])
    np.testing.assert_array_equal(part, want)
    total = _download(dtotal, stream, np.uint64, 1)[0].astype(np.int64)  # two's complement
    assert total == data.astype(np.int64).sum()
    for buf in (din, dpart, dtotal):
        buf.close(stream)


def test_many_launches_in_stream_order(device, stream):
    # c = a + b, then a = c + b, ... ten launches queued on one stream before one sync: each
    # reads what the previous wrote.
    kernel = _kernel(device, VECTOR_ADD, "vector_add")
    n = 10007
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, dtype=np.float32)
    da, db, dc = _upload(device, stream, a), _upload(device, stream, b), _upload(device, stream, a)
    cfg = LaunchConfig(grid=(n + 127) // 128, block=128)
    for k in range(10):
        src, dst = (da, dc) if k % 2 == 0 else (dc, da)
        launch(stream, cfg, kernel, src, db, dst, np.uint32(n))
    np.testing.assert_array_equal(_download(da, stream, np.float32, n), a + 20)
    for buf in (da, db, dc):
        buf.close(stream)
