"""CuPy (cupy-cuda13x, NVIDIA's runtime inside) on the driver it finds: memory only.

What needs a kernel (cp.arange, x.fill, arithmetic) follows the launch policy (README,
"Programs built with nvcc") and is not tried here.
"""
import numpy as np
import pytest

import helpers

import cupy as cp
rt = cp.cuda.runtime


def test_device_count_and_host_device_copies():
    assert rt.getDeviceCount() >= 1
    host = np.arange(4096, dtype=np.float32)
    dev = cp.asarray(host)  # a copy, no kernel
    assert dev.data.ptr != 0
    assert np.array_equal(cp.asnumpy(dev), host)


def test_runtime_memory_calls():
    p = rt.malloc(4096)
    rt.memset(p, 0x5A, 4096)
    back = np.zeros(4096, dtype=np.uint8)
    rt.memcpy(back.ctypes.data, p, 4096, rt.memcpyDeviceToHost)
    assert (back == 0x5A).all()
    s = rt.streamCreate()
    q = rt.mallocAsync(1 << 16, s)
    rt.memsetAsync(q, 7, 1 << 16, s)
    rt.memcpyAsync(back.ctypes.data, q, 4096, rt.memcpyDeviceToHost, s)
    rt.freeAsync(q, s)
    rt.streamSynchronize(s)
    assert (back == 7).all()
    rt.streamDestroy(s)
    rt.free(p)


def test_memory_async_pool_allocates_from_a_stream_ordered_pool():
    pool = cp.cuda.MemoryAsyncPool()
    with cp.cuda.using_allocator(pool.malloc):
        x = cp.empty(1 << 20, dtype=cp.uint8)
        y = cp.asarray(np.full(256, 3, dtype=np.uint8))
        assert x.data.ptr != 0
        assert cp.asnumpy(y).tolist() == [3] * 256
        del x, y
    cp.cuda.Device().synchronize()


def _child_writes(handle, data):
    import cupy

    r = cupy.cuda.runtime
    p = r.ipcOpenMemHandle(handle)
    src = np.frombuffer(data, dtype=np.uint8).copy()
    r.memcpy(p, src.ctypes.data, len(data), r.memcpyHostToDevice)
    r.deviceSynchronize()
    r.ipcCloseMemHandle(p)
    return True


def test_ipc_handle_shared_with_a_second_process():
    p = rt.malloc(1 << 20)
    rt.memset(p, 0, 1 << 20)
    handle = rt.ipcGetMemHandle(p)
    data = bytes(helpers.pattern(4096, 7))
    assert helpers.run_child(_child_writes, handle, data)
    back = np.zeros(4096, dtype=np.uint8)
    rt.memcpy(back.ctypes.data, p, 4096, rt.memcpyDeviceToHost)
    assert back.tobytes() == data
    rt.free(p)
