"""RMM (rmm-cu13, NVIDIA's runtime inside librmm) on the driver it finds: its memory resources."""
import numpy as np
import pytest

import rmm


@pytest.fixture(autouse=True)
def _restore_resource():
    before = rmm.mr.get_current_device_resource()
    yield
    rmm.mr.set_current_device_resource(before)


def round_trip(size, seed):
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
    buf = rmm.DeviceBuffer.to_device(data)
    assert buf.size == size
    assert bytes(buf.copy_to_host()) == data
    return buf


def test_device_buffer_copies_to_and_from_host():
    round_trip(1 << 16, 1)


def test_cuda_async_memory_resource():
    rmm.mr.set_current_device_resource(rmm.mr.CudaAsyncMemoryResource())
    bufs = [round_trip(4096 * (i + 1), i) for i in range(4)]
    assert len({b.ptr for b in bufs}) == 4


def test_pool_memory_resource_over_cuda_memory():
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 22,
                                     maximum_pool_size=1 << 24)
    rmm.mr.set_current_device_resource(pool)
    a = round_trip(1 << 20, 2)
    b = round_trip(1 << 20, 3)
    assert a.ptr != b.ptr
    assert pool.pool_size() >= 1 << 21
