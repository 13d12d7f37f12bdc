"""Checks no GPU gives (issue 38, item 6): what a kernel does that a GPU lets through silently,
reported on stderr when the grid ends, the access still made as on a GPU.

- managed memory attached to the host or to another stream (cuStreamAttachMemAsync): "accessing
  memory on the device from streams that are not associated with it will produce undefined
  results" (the driver API's documentation of cuStreamAttachMemAsync);
- memory of a pool freed in stream order (cuMemFreeAsync) and still mapped.

cuda.bindings' driver API with a hand-written PTX kernel that stores one word. cuda-shim only:
NVIDIA's driver reports nothing, which is why the checks exist.
"""
import ctypes

import pytest

import helpers

from cuda.bindings import driver as cu

pytestmark = [pytest.mark.kernels, pytest.mark.shim_only]

STORE = b"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry store(.param .u64 p, .param .u32 v)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [v];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
\0"""


def ok(result):
    err = result[0] if isinstance(result, tuple) else result
    assert err == cu.CUresult.CUDA_SUCCESS, err
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


@pytest.fixture
def kernel():
    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    ok(cu.cuCtxSetCurrent(ctx))
    mod = ok(cu.cuModuleLoadData(STORE))
    fn = ok(cu.cuModuleGetFunction(mod, b"store"))
    streams = [ok(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING)) for _ in range(2)]
    yield fn, streams
    for s in streams:
        ok(cu.cuStreamDestroy(s))
    ok(cu.cuModuleUnload(mod))
    ok(cu.cuDevicePrimaryCtxRelease(dev))


def store(fn, stream, ptr, value):
    p = ctypes.c_uint64(int(ptr))
    v = ctypes.c_uint32(value)
    args = (ctypes.c_void_p * 2)(ctypes.addressof(p), ctypes.addressof(v))
    ok(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, ctypes.addressof(args), 0))
    ok(cu.cuStreamSynchronize(stream))


def word(ptr):
    return ctypes.c_uint32.from_address(int(ptr)).value


def attach(stream, ptr, flags):
    ok(cu.cuStreamAttachMemAsync(stream, ptr, 0, flags))
    ok(cu.cuStreamSynchronize(stream))


def test_managed_memory_attached_to_another_stream_is_reported(kernel, capfd):
    fn, (a, b) = kernel
    ptr = ok(cu.cuMemAllocManaged(4096, cu.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
    attach(a, ptr, cu.CUmemAttach_flags.CU_MEM_ATTACH_SINGLE)
    store(fn, a, ptr, 11)  # its own stream: nothing to say
    assert "managed allocation" not in capfd.readouterr().err
    store(fn, b, ptr, 22)
    err = capfd.readouterr().err
    assert f"managed allocation at {int(ptr):#x} attached to stream" in err
    assert "CU_MEM_ATTACH_SINGLE" in err and "kernel 'store'" in err
    assert word(ptr) == 22  # let through, as a GPU with concurrent managed access does
    ok(cu.cuMemFree(ptr))


def test_managed_memory_attached_to_the_host_is_reported(kernel, capfd):
    fn, (a, _) = kernel
    ptr = ok(cu.cuMemAllocManaged(4096, cu.CUmemAttach_flags.CU_MEM_ATTACH_HOST))
    store(fn, a, ptr, 33)
    assert "CU_MEM_ATTACH_HOST" in capfd.readouterr().err
    attach(a, ptr, cu.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
    store(fn, a, ptr, 44)
    assert "managed allocation" not in capfd.readouterr().err
    assert word(ptr) == 44
    ok(cu.cuMemFree(ptr))


def test_pool_memory_freed_in_stream_order_is_reported(kernel, capfd):
    fn, (a, _) = kernel
    keep = ok(cu.cuMemAllocAsync(1 << 20, a))  # keeps the pool's window mapped
    ptr = ok(cu.cuMemAllocAsync(4096, a))
    ok(cu.cuMemFreeAsync(ptr, a))
    store(fn, a, ptr, 55)
    assert "freed in stream order" in capfd.readouterr().err
    ok(cu.cuMemFreeAsync(keep, a))
    ok(cu.cuStreamSynchronize(a))
