"""Stream memory operations through cuda.bindings (issue 39): cuStreamWriteValue32/64,
cuStreamWaitValue32/64 and cuStreamBatchMemOp order work between streams by a word in memory,
as NCCL-style libraries use them. The same file passes on NVIDIA's driver (codes measured on the
H200: tests/probe/cases/memops.cases)."""
import ctypes

from cuda.bindings import driver


R = driver.CUresult
NONBLOCKING = driver.CUstream_flags.CU_STREAM_NON_BLOCKING


def new_stream():
    err, s = driver.cuStreamCreate(NONBLOCKING)
    assert err == R.CUDA_SUCCESS
    return s


class Mem:
    """cuMemAlloc'd memory: stream memory operations refuse memory pools' allocations (measured),
    which is what cuda.core's Device.allocate returns."""

    def __init__(self, size):
        err, self.p = driver.cuMemAlloc(size)
        assert err == R.CUDA_SUCCESS
        assert driver.cuMemsetD8(self.p, 0, size)[0] == R.CUDA_SUCCESS
        self.size = size

    def __del__(self):
        driver.cuMemFree(self.p)


def word(m, offset=0):
    return driver.CUdeviceptr(int(m.p) + offset)


def read_u64(m, offset=0):
    out = ctypes.create_string_buffer(8)
    assert driver.cuMemcpyDtoH(out, word(m, offset), 8)[0] == R.CUDA_SUCCESS
    return int.from_bytes(out.raw, "little")


def test_a_wait_holds_its_stream_until_another_stream_writes(device, stream):
    buf = Mem(4096)
    waiter, writer = new_stream(), new_stream()
    assert driver.cuStreamWaitValue32(waiter, word(buf), 5, driver.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamWriteValue32(waiter, word(buf, 8), 0x77, 0)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamQuery(waiter)[0] == R.CUDA_ERROR_NOT_READY
    assert driver.cuStreamWriteValue32(writer, word(buf), 5, 0)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamSynchronize(waiter)[0] == R.CUDA_SUCCESS
    assert read_u64(buf, 8) == 0x77
    for s in (waiter, writer):
        driver.cuStreamDestroy(s)


def test_64_bit_words_and_bad_arguments(device, stream):
    buf = Mem(4096)
    s = new_stream()
    assert driver.cuStreamWriteValue64(s, word(buf, 16), 0x1122334455667788, 0)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamWaitValue64(s, word(buf, 16), 0x1122334455667788, 1)[0] == R.CUDA_SUCCESS  # EQ
    assert driver.cuStreamSynchronize(s)[0] == R.CUDA_SUCCESS
    assert read_u64(buf, 16) == 0x1122334455667788
    assert driver.cuStreamWriteValue32(s, word(buf, 2), 1, 0)[0] == R.CUDA_ERROR_INVALID_VALUE  # unaligned
    assert driver.cuStreamWriteValue32(s, word(buf), 1, 1)[0] == R.CUDA_ERROR_INVALID_VALUE  # flags
    assert driver.cuStreamWaitValue32(s, word(buf), 1, 4)[0] == R.CUDA_ERROR_INVALID_VALUE  # condition
    pooled = device.allocate(4096, stream=stream)
    stream.sync()
    assert driver.cuStreamWriteValue32(s, driver.CUdeviceptr(int(pooled.handle)), 1, 0)[0] == R.CUDA_ERROR_INVALID_VALUE
    driver.cuStreamDestroy(s)


def test_a_batch_and_its_capture(device, stream):
    buf = Mem(4096)
    s = new_stream()
    ops = []
    for i, v in enumerate((3, 4)):
        p = driver.CUstreamBatchMemOpParams()
        p.writeValue.operation = driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WRITE_VALUE_32
        p.writeValue.address = word(buf, 4 * i)
        p.writeValue.value = v
        ops.append(p)
    assert driver.cuStreamBeginCapture(s, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamBatchMemOp(s, 2, ops, 0)[0] == R.CUDA_SUCCESS
    err, graph = driver.cuStreamEndCapture(s)
    assert err == R.CUDA_SUCCESS
    err, nodes, n = driver.cuGraphGetNodes(graph, 4)
    assert err == R.CUDA_SUCCESS and n == 1
    assert driver.cuGraphNodeGetType(nodes[0])[1] == driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_BATCH_MEM_OP
    assert read_u64(buf) == 0  # captured, not run
    err, exe = driver.cuGraphInstantiate(graph, 0)
    assert err == R.CUDA_SUCCESS
    assert driver.cuGraphLaunch(exe, s)[0] == R.CUDA_SUCCESS
    assert driver.cuStreamSynchronize(s)[0] == R.CUDA_SUCCESS
    assert read_u64(buf) == 0x0000000400000003
    driver.cuGraphExecDestroy(exe)
    driver.cuGraphDestroy(graph)
    driver.cuStreamDestroy(s)
