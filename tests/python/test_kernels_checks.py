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


# Each thread stores its index to s[tid], then reads the word of the thread 32 further on (the
# other warp): without the barrier that read races with the other warp's store.
RACE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry {name}(.param .u64 out)
{{
  .shared .align 4 .b8 s[256];
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  {barrier}
  add.s32 %r5, %r1, 32;
  and.b32 %r5, %r5, 63;
  shl.b32 %r5, %r5, 2;
  add.s32 %r6, %r3, %r5;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r7;
  ret;
}}
"""

RACE_CHILD = r"""
import ctypes, sys
from cuda.bindings import driver as cu
cu.cuInit(0)
_, dev = cu.cuDeviceGet(0)
_, ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
src = sys.argv[1].encode() + b"\0"
err, mod = cu.cuModuleLoadData(src)
assert err == 0, err
_, out = cu.cuMemAlloc(64 * 4)
for name in ("racy", "fenced"):
    _, fn = cu.cuModuleGetFunction(mod, name.encode())
    p = ctypes.c_uint64(int(out))
    args = (ctypes.c_void_p * 1)(ctypes.addressof(p))
    assert cu.cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, 0, ctypes.addressof(args), 0)[0] == 0
    assert cu.cuCtxSynchronize()[0] == 0
    host = (ctypes.c_uint32 * 64)()
    assert cu.cuMemcpyDtoH(host, out, 64 * 4)[0] == 0
    if name == "fenced":  # the racy kernel's values are whatever the race left
        assert list(host) == [(t + 32) % 64 for t in range(64)], list(host)
print("done")
"""


@pytest.mark.parametrize("strict", ["1", None])
def test_shared_memory_race_is_reported_under_strict(strict):
    import os
    import subprocess
    import sys
    src = RACE.format(name="racy", barrier="") + RACE.format(name="fenced", barrier="bar.sync 0;").split(
        ".address_size 64", 1)[1]
    env = dict(os.environ)
    env.pop("CUDA_SHIM_STRICT", None)
    if strict:
        env["CUDA_SHIM_STRICT"] = strict
    r = subprocess.run([sys.executable, "-c", RACE_CHILD, src], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout
    races = [l for l in r.stderr.splitlines() if "shared-memory race" in l]
    if not strict:
        assert races == []
        return
    # One report: the racy kernel's store/load pair (lines of the PTX), none for the fenced one.
    assert len(races) == 1, r.stderr
    assert "kernel 'racy'" in r.stderr and "kernel 'fenced'" not in r.stderr
    assert "read after write" in races[0] or "write after read" in races[0]


def test_padding_past_the_end_of_an_allocation_is_reported_not_a_fault(kernel, capfd):
    # cuMemAlloc hands out 512-byte units; a GPU reads and writes past the end of a 40-byte
    # allocation, inside its unit, without a fault (numba-cuda's own tests do).
    fn, (a, _) = kernel
    ptr = ok(cu.cuMemAlloc(40))
    store(fn, a, int(ptr) + 44, 66)
    err = capfd.readouterr().err
    assert f"bytes past the end of the 40-byte allocation at {int(ptr):#x}: its padding" in err
    ok(cu.cuCtxSynchronize())
    ok(cu.cuMemFree(ptr))
