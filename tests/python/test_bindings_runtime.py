"""cuda.bindings.runtime: NVIDIA's runtime, linked into the module, on the driver it finds.

On cuda-shim that runtime talks to our libcuda.so.1 through NVIDIA's private tables
(emu/hosting); its answers must agree with the driver module's.
"""
from cuda.bindings import driver as cu
from cuda.bindings import runtime as rt

import helpers

SUCCESS = rt.cudaError_t.cudaSuccess


def test_device_count_matches_the_driver(device):
    err, n = rt.cudaGetDeviceCount()
    assert err == SUCCESS
    assert n == cu.cuDeviceGetCount()[1]


def test_pci_bus_id_matches_the_driver(device):
    err, raw = rt.cudaDeviceGetPCIBusId(13, 0)
    assert err == SUCCESS
    err, want = cu.cuDeviceGetPCIBusId(13, cu.cuDeviceGet(0)[1])
    assert raw.split(b"\0")[0] == want.split(b"\0")[0]
    assert device.pci_bus_id == raw.split(b"\0")[0].decode()


def test_device_synchronize_and_current_device(device):
    assert rt.cudaDeviceSynchronize() == (SUCCESS,)
    assert rt.cudaGetDevice() == (SUCCESS, 0)
    device.sync()


def test_stream_priority_range_matches_the_context(device):
    err, least, greatest = rt.cudaDeviceGetStreamPriorityRange()
    assert err == SUCCESS
    assert (least, greatest) == tuple(cu.cuCtxGetStreamPriorityRange()[1:])


def test_invalid_device_is_sticky_until_read(device):
    assert rt.cudaSetDevice(99) == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaPeekAtLastError() == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaGetLastError() == (rt.cudaError_t.cudaErrorInvalidDevice,)
    assert rt.cudaGetLastError() == (SUCCESS,)


def test_attribute_matches_the_driver(device):
    err, numa = rt.cudaDeviceGetAttribute(rt.cudaDeviceAttr.cudaDevAttrHostNumaId, 0)
    assert err == SUCCESS
    assert numa == cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0)[1]


def test_stream_ordered_allocation_from_a_pool(device):
    props = rt.cudaMemPoolProps()
    props.allocType = rt.cudaMemAllocationType.cudaMemAllocationTypePinned
    props.location.type = rt.cudaMemLocationType.cudaMemLocationTypeDevice
    props.location.id = 0
    err, pool = rt.cudaMemPoolCreate(props)
    assert err == SUCCESS
    err, stream = rt.cudaStreamCreate()
    assert err == SUCCESS
    err, ptr = rt.cudaMallocFromPoolAsync(4096, pool, stream)
    assert err == SUCCESS
    assert rt.cudaMemsetAsync(ptr, 7, 4096, stream) == (SUCCESS,)
    assert rt.cudaStreamSynchronize(stream) == (SUCCESS,)
    err, ptype = cu.cuPointerGetAttribute(cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, ptr)
    assert err == cu.CUresult.CUDA_SUCCESS
    assert int(ptype) == int(pool)
    assert rt.cudaFreeAsync(ptr, stream) == (SUCCESS,)
    assert rt.cudaStreamSynchronize(stream) == (SUCCESS,)
    assert rt.cudaStreamDestroy(stream) == (SUCCESS,)
    assert rt.cudaMemPoolDestroy(pool) == (SUCCESS,)


def test_device_memory_round_trip(device):
    err, ptr = rt.cudaMalloc(256)
    assert err == SUCCESS
    src = bytes(range(256))
    assert rt.cudaMemcpy(ptr, src, 256, rt.cudaMemcpyKind.cudaMemcpyHostToDevice) == (SUCCESS,)
    back = bytearray(256)
    assert rt.cudaMemcpy(back, ptr, 256, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost) == (SUCCESS,)
    assert bytes(back) == src
    assert rt.cudaFree(ptr) == (SUCCESS,)
