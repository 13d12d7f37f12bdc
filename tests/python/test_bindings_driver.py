"""cuda.bindings.driver end to end: entry-point resolution and the memory APIs through it.

cuda.bindings (and so cuda.core) dlopens libcuda.so.1, takes cuGetProcAddress_v2 and
resolves every other function through it. CTest runs this file with `cuda-shim run
--preload`, the dynamically linked client case.
"""
import os
import pathlib

import pytest
from cuda.bindings import driver as cu

import helpers
from helpers import MIB

OK = cu.CUresult.CUDA_SUCCESS
DATA = pathlib.Path(__file__).with_name("data")


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    assert err == OK, f"{err!r}"
    return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)


def driver_functions():
    return sorted(n for n in dir(cu) if n.startswith("cu") and n[2].isupper() and callable(getattr(cu, n)))


def resolve(name, version):
    err, pfn, status = cu.cuGetProcAddress(name.encode(), version, cu.CUflags(0) if hasattr(cu, "CUflags") else 0)
    return err, int(pfn) if pfn is not None else 0, status


def test_every_function_cuda_core_uses_resolves(device):
    """The driver entries cuda.core 1.2.2 calls (its driver calls, found by tracing this
    suite) resolve to a function at CUDA 13.0, on the emulator as on the real driver."""
    used = (DATA / "cuda_core_driver_entries.txt").read_text().split()
    assert len(used) > 30
    missing = []
    for name in used:
        err, pfn, status = resolve(name, 13000)
        if err != OK or pfn == 0 or status != cu.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS:
            missing.append((name, err, status))
    assert missing == []


def test_resolution_of_every_binding_matches_the_real_driver(device):
    """Each cu* function of cuda.bindings.driver, asked for at CUDA 13.0: found or not found
    exactly as NVIDIA's driver 580 answered (recorded on an H200: data/procaddr_580.txt)."""
    err, version = cu.cuDriverGetVersion()
    # The recording is a CUDA 13.0 driver's: entry points of later versions are unknown to it.
    # CTest runs this file with CUDA_SHIM_DRIVER_VERSION=13000 so the emulator is one too.
    assert version == 13000
    recorded = {}
    for line in (DATA / "procaddr_580.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, answer = line.split()
            recorded[name] = answer
    differ = []
    for name in driver_functions():
        if name not in recorded:
            continue
        err, pfn, status = resolve(name, 13000)
        answer = "found" if (err == OK and pfn) else f"{int(err)}/{int(status)}"
        if answer != recorded[name]:
            differ.append((name, recorded[name], answer))
    assert differ == []


def test_resolution_newer_than_the_driver_is_invalid_value(device):
    err, version = cu.cuDriverGetVersion()
    err, pfn, status = resolve("cuMemAlloc", version + 10)
    assert err == cu.CUresult.CUDA_ERROR_INVALID_VALUE


def test_unknown_symbol_is_success_with_no_function(device):
    # Measured on the H200: not an error code, a NULL pointer and the status say it.
    err, pfn, status = resolve("cuNoSuchFunction", 13000)
    assert err == OK
    assert pfn == 0
    assert status == cu.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND


def pool_props(location_type, location_id, handle_types):
    props = cu.CUmemPoolProps()
    props.allocType = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    props.handleTypes = handle_types
    props.location.type = location_type
    props.location.id = location_id
    return props


def test_pool_lifecycle_through_the_driver_module(device):
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    stream = check(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING))
    props = pool_props(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, int(dev),
                       cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    pool = check(cu.cuMemPoolCreate(props))
    ptr = check(cu.cuMemAllocFromPoolAsync(MIB, pool, stream))
    check(cu.cuMemsetD8Async(ptr, 0x6B, MIB, stream))
    host = bytearray(16)
    check(cu.cuMemcpyDtoHAsync(host, ptr, 16, stream))
    check(cu.cuStreamSynchronize(stream))
    assert bytes(host) == b"\x6b" * 16
    used = check(cu.cuMemPoolGetAttribute(pool, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT))
    assert int(used) >= MIB
    fd = check(cu.cuMemPoolExportToShareableHandle(pool, cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
    assert int(fd) >= 0
    data = check(cu.cuMemPoolExportPointer(ptr))
    assert data.getPtr() != 0
    os.close(int(fd))
    check(cu.cuMemFreeAsync(ptr, stream))
    check(cu.cuStreamSynchronize(stream))
    check(cu.cuMemPoolDestroy(pool))
    check(cu.cuStreamDestroy(stream))


def test_errors_come_back_as_the_drivers_codes(device):
    err, _ = cu.cuMemAlloc(0)
    assert err == cu.CUresult.CUDA_ERROR_INVALID_VALUE
    err, = cu.cuMemFree(0xDEAD0000)
    assert err == cu.CUresult.CUDA_ERROR_INVALID_VALUE
    err, name = cu.cuGetErrorName(cu.CUresult.CUDA_ERROR_INVALID_VALUE)
    assert name == b"CUDA_ERROR_INVALID_VALUE"


def test_vmm_export_import_and_map(device):
    dev = check(cu.cuDeviceGet(0))
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = int(dev)
    prop.requestedHandleTypes = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    gran = int(check(cu.cuMemGetAllocationGranularity(prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
    handle = check(cu.cuMemCreate(gran, prop, 0))
    fd = int(check(cu.cuMemExportToShareableHandle(handle, cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)))
    imported = check(cu.cuMemImportFromShareableHandle(fd, cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    os.close(fd)
    va = check(cu.cuMemAddressReserve(2 * gran, 0, 0, 0))
    check(cu.cuMemMap(va, gran, 0, handle, 0))
    check(cu.cuMemMap(int(va) + gran, gran, 0, imported, 0))
    access = cu.CUmemAccessDesc()
    access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = int(dev)
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    check(cu.cuMemSetAccess(va, 2 * gran, [access], 1))
    check(cu.cuMemsetD8(va, 0x42, gran))
    out = bytearray(8)
    # The second mapping is the same physical memory as the first.
    check(cu.cuMemcpyDtoH(out, int(va) + gran, 8))
    assert bytes(out) == b"\x42" * 8
    check(cu.cuMemUnmap(va, 2 * gran))
    check(cu.cuMemAddressFree(va, 2 * gran))
    check(cu.cuMemRelease(imported))
    check(cu.cuMemRelease(handle))


@pytest.mark.shim_only
def test_the_emulator_is_the_library_loaded():
    assert helpers.on_cuda_shim()
    assert "cuda-shim" not in os.environ.get("LD_PRELOAD", "") or "libcuda.so.1" in os.environ["LD_PRELOAD"]
