"""The batch memory calls as cuda.core drives them (issue 39): cuda.core.utils.copy_batch
(cuMemcpyBatchAsync), Buffer.copy_from with CopyOptions (CUDA 13.2's cuMemcpyWithAttributesAsync),
prefetch_batch, discard_batch and
discard_prefetch_batch (cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync,
cuMemDiscardAndPrefetchBatchAsync); and, through cuda.bindings, the driver's answers where
cuda.core does not look (a bad copy in the middle of a batch). The same file passes on NVIDIA's
driver: the expected values are the H200's (tests/probe/cases/batch.cases has the codes).
"""
import ctypes
import threading

import pytest
from cuda.bindings import driver
from cuda.core import Device, Host, LegacyPinnedMemoryResource, ManagedMemoryResource
from cuda.core.utils import CopyOptions, copy_batch, discard_batch, discard_prefetch_batch, prefetch_batch

import helpers
from helpers import KIB, MIB

R = driver.CUresult


def dptrs(*ps):
    return [driver.CUdeviceptr(int(p)) for p in ps]


def last_prefetch(buf):
    """The range's last prefetch location: (type, id) as cuMemRangeGetAttribute reports them."""
    attrs = driver.CUmem_range_attribute
    err, t = driver.cuMemRangeGetAttribute(4, attrs.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                           int(buf.handle), buf.size)
    assert err == R.CUDA_SUCCESS
    err, i = driver.cuMemRangeGetAttribute(4, attrs.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
                                           int(buf.handle), buf.size)
    assert err == R.CUDA_SUCCESS
    return int(t), int(i)


def test_copy_batch_moves_every_pair(device, stream):
    srcs = [device.allocate(n, stream=stream) for n in (1, 4 * KIB, 3 * KIB + 7)]
    dsts = [device.allocate(b.size, stream=stream) for b in srcs]
    for k, b in enumerate(srcs):
        helpers.write_bytes(b, helpers.pattern(b.size, 10 + k), stream)
    copy_batch(stream, srcs, dsts)
    for k, b in enumerate(dsts):
        assert helpers.read_bytes(b, stream) == helpers.pattern(b.size, 10 + k)


def test_copy_batch_between_host_and_device_with_options(device, stream):
    pinned = LegacyPinnedMemoryResource()
    host_src = pinned.allocate(8 * KIB)
    dev = device.allocate(8 * KIB, stream=stream)
    host_dst = pinned.allocate(8 * KIB)
    ctypes.memmove(int(host_src.handle), helpers.pattern(8 * KIB, 3), 8 * KIB)
    copy_batch(stream, [host_src], [dev], options=CopyOptions(src_access_order="any", overlap_mode="prefer_overlap_with_compute"))
    copy_batch(stream, [dev], [host_dst], options=[CopyOptions(src_access_order="stream")])
    stream.sync()
    assert helpers.host_view(host_dst) == helpers.pattern(8 * KIB, 3)


def hold_stream(stream):
    """Queues a host function that keeps the stream busy until the returned event is set."""
    gate = threading.Event()

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def hold(_):
        gate.wait(10)

    fn = driver.CUhostFn(ctypes.cast(hold, ctypes.c_void_p).value)
    assert driver.cuLaunchHostFunc(int(stream.handle), fn, 0)[0] == R.CUDA_SUCCESS
    return gate, hold  # the caller keeps the callback alive until the stream ran it


def copy_behind_a_busy_stream(device, stream, copy):
    """Copies a pinned source with `copy(src, dst)` while the stream is held, overwrites the
    source as soon as the call returns, then lets the stream go: the bytes that arrive say when
    the copy read its source (seed 1: during the call; seed 2: when the stream got there)."""
    src = LegacyPinnedMemoryResource().allocate(4 * KIB)
    dst = device.allocate(4 * KIB, stream=stream)
    ctypes.memmove(int(src.handle), helpers.pattern(4 * KIB, 1), 4 * KIB)
    gate, keep = hold_stream(stream)
    copy(src, dst)
    ctypes.memmove(int(src.handle), helpers.pattern(4 * KIB, 2), 4 * KIB)
    gate.set()
    got = helpers.read_bytes(dst, stream)
    del keep
    return {helpers.pattern(4 * KIB, 1): "during the call", helpers.pattern(4 * KIB, 2): "in stream order"}.get(got)


def test_during_api_call_reads_the_source_before_returning(device, stream):
    order = CopyOptions(src_access_order="during_api_call")
    assert copy_behind_a_busy_stream(device, stream, lambda s, d: copy_batch(stream, [s], [d], options=order)) == \
        "during the call"


def test_stream_order_reads_the_source_when_the_stream_gets_there(device, stream):
    order = CopyOptions(src_access_order="stream")
    assert copy_behind_a_busy_stream(device, stream, lambda s, d: copy_batch(stream, [s], [d], options=order)) == \
        "in stream order"


@pytest.mark.skipif(driver.cuDriverGetVersion()[1] < 13020, reason="cuMemcpyWithAttributesAsync is CUDA 13.2's")
def test_copy_from_with_options(device, stream):
    # Buffer.copy_from(options=...) goes through cuMemcpyWithAttributesAsync (CUDA 13.2).
    order = CopyOptions(src_access_order="during_api_call")
    assert copy_behind_a_busy_stream(device, stream, lambda s, d: d.copy_from(s, stream=stream, options=order)) == \
        "during the call"


def test_copy_batch_refuses_a_capturing_stream(device):
    a = device.allocate(KIB, stream=device.default_stream)
    b = device.allocate(KIB, stream=device.default_stream)
    device.sync()
    gb = device.create_graph_builder().begin_building()
    with pytest.raises(TypeError):
        copy_batch(gb.stream, [a], [b])
    gb.end_building()


def test_a_bad_copy_stops_the_batch_where_it_is(device, stream):
    # cuda.bindings: the copies before the bad one run; the call answers INVALID_VALUE.
    a = device.allocate(4 * KIB, stream=stream)
    b = device.allocate(4 * KIB, stream=stream)
    helpers.write_bytes(a, helpers.pattern(4 * KIB, 5), stream)
    helpers.write_bytes(b, bytes(4 * KIB), stream)
    attr = driver.CUmemcpyAttributes()
    attr.srcAccessOrder = driver.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    pa, pb = int(a.handle), int(b.handle)
    err, = driver.cuMemcpyBatchAsync(dptrs(pb, pb + 2 * KIB), dptrs(pa, pa + 3 * KIB), [KIB, 2 * KIB], 2, [attr], [0],
                                     1, int(stream.handle))
    assert err == R.CUDA_ERROR_INVALID_VALUE  # the second copy reads past a's end
    got = helpers.read_bytes(b, stream)
    assert got[:KIB] == helpers.pattern(4 * KIB, 5)[:KIB]
    assert got[KIB:] == bytes(3 * KIB)


def test_the_legacy_stream_is_refused(device):
    a = device.allocate(KIB, stream=device.default_stream)
    b = device.allocate(KIB, stream=device.default_stream)
    device.sync()
    attr = driver.CUmemcpyAttributes()
    attr.srcAccessOrder = driver.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    for s in (0, driver.CU_STREAM_LEGACY):
        err, = driver.cuMemcpyBatchAsync(dptrs(b.handle), dptrs(a.handle), [KIB], 1, [attr], [0], 1, s)
        assert err == R.CUDA_ERROR_INVALID_VALUE
    err, = driver.cuMemcpyBatchAsync(dptrs(b.handle), dptrs(a.handle), [KIB], 1, [attr], [0], 1,
                                     driver.CU_STREAM_PER_THREAD)
    assert err == R.CUDA_SUCCESS
    device.sync()


def test_prefetch_batch_sets_each_ranges_location(device, stream):
    mr = ManagedMemoryResource()
    bufs = [mr.allocate(MIB, stream=stream) for _ in range(3)]
    stream.sync()
    prefetch_batch(stream, bufs, [device, Host(), device])
    stream.sync()
    dev_type = int(driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE)
    host_type = int(driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST)
    assert [last_prefetch(b) for b in bufs] == [(dev_type, device.device_id), (host_type, 0),
                                               (dev_type, device.device_id)]
    discard_prefetch_batch(stream, bufs[:2], Host())
    stream.sync()
    assert last_prefetch(bufs[0]) == (host_type, 0)
    for b in bufs:
        b.close(stream)


def test_discard_batch_keeps_the_range_usable(device, stream):
    mr = ManagedMemoryResource()
    bufs = [mr.allocate(64 * KIB, stream=stream) for _ in range(2)]
    for b in bufs:
        helpers.write_bytes(b, helpers.pattern(b.size, 2), stream)
    discard_batch(stream, bufs)
    # Discarded contents are indeterminate until written again; written, they read back.
    helpers.write_bytes(bufs[1], helpers.pattern(bufs[1].size, 9), stream)
    assert helpers.read_bytes(bufs[1], stream) == helpers.pattern(bufs[1].size, 9)
    for b in bufs:
        b.close(stream)


def test_prefetch_batch_refuses_device_memory(device, stream):
    a = device.allocate(MIB, stream=stream)
    m = ManagedMemoryResource().allocate(MIB, stream=stream)
    stream.sync()
    loc = driver.CUmemLocation()
    loc.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    loc.id = device.device_id
    err, = driver.cuMemPrefetchBatchAsync(dptrs(m.handle, a.handle), [MIB, MIB], 2, [loc], [0], 1, 0,
                                          int(stream.handle))
    assert err == R.CUDA_ERROR_INVALID_VALUE
    m.close(stream)
