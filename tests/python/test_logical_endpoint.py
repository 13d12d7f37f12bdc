"""Logical endpoints (CUDA 13.3, cuLogicalEndpoint*) through cuda.bindings.driver.

The call sequences of tests/conformance/test_logical_endpoint*.cpp, made by the real client
library: its structs and enums against the driver's ABI, one endpoint's life in one process,
and a FABRIC endpoint exported to a spawned child that imports it. CTest gives this file two
devices (the child is a peer on the second) and IMEX channel 0 (fabric handles need one).
"""
import ctypes
import time

import pytest
from cuda.bindings import driver as cu

import helpers
from helpers import MIB

OK = cu.CUresult.CUDA_SUCCESS
INVALID = cu.CUresult.CUDA_ERROR_INVALID_VALUE
UNICAST = cu.CUlogicalEndpointType.CU_LOGICAL_ENDPOINT_TYPE_UNICAST
MULTICAST = cu.CUlogicalEndpointType.CU_LOGICAL_ENDPOINT_TYPE_MULTICAST
FABRIC = cu.CUlogicalEndpointIpcHandleType.CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC
COUNTED = cu.CUlogicalEndpointFlag.CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS
ENTRIES = ("IdReserve", "IdRelease", "GetLimits", "Create", "AddDevice", "Destroy", "BindAddr",
           "BindMem", "Unbind", "Export", "Import", "Query")


def _why_absent():
    """None where the driver offers logical endpoints, else why not (driver 580 = CUDA 13.0)."""
    if cu.cuInit(0)[0] != OK:
        return "cuInit failed: no CUDA driver"
    version = cu.cuDriverGetVersion()[1]
    if version < 13030:
        return f"logical endpoints need a CUDA 13.3 driver (13030); this one reports {version}"
    missing = [f"cuLogicalEndpoint{n}" for n in ENTRIES if not _resolves(f"cuLogicalEndpoint{n}")]
    if missing:
        return f"cuGetProcAddress(..., 13030) does not resolve {', '.join(missing)}: logical endpoints need a CUDA 13.3 driver"
    return None


def _resolves(name):
    err, pfn, status = cu.cuGetProcAddress(name.encode(), 13030, 0)
    return err == OK and bool(pfn) and status == cu.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS


_ABSENT = _why_absent()
pytestmark = pytest.mark.skipif(_ABSENT is not None, reason=str(_ABSENT))


def check(result):
    err, *rest = result
    assert err == OK, f"{err!r}"
    return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)


def unicast(dev, size, ipc=0, flags=0):
    p = cu.CUlogicalEndpointProp()
    p.type = UNICAST
    p.unicast.device = dev
    p.size = size
    p.ipcHandleTypes = ipc
    p.flags = flags
    return p


def wait_ready(le_id, count=1, timeout_s=10.0):
    """Polls cuLogicalEndpointQuery as NCCL does; returns how many polls answered 'not ready'."""
    deadline, waits = time.monotonic() + timeout_s, 0
    while not check(cu.cuLogicalEndpointQuery(le_id, count)):
        assert time.monotonic() < deadline, f"ids [{le_id}, {le_id + count}) never became ready"
        waits += 1
        time.sleep(0.0001)
    return waits


def alignment(dev=0):
    return int(check(cu.cuLogicalEndpointGetLimits(unicast(dev, 0)))[0])


def vmm(dev, size, fabric):
    """cuMemCreate memory on dev (FABRIC-shareable or not), mapped read-write: (handle, va)."""
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = dev
    if fabric:
        prop.requestedHandleTypes = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC
    handle = check(cu.cuMemCreate(size, prop, 0))
    va = check(cu.cuMemAddressReserve(size, 0, 0, 0))
    check(cu.cuMemMap(va, size, 0, handle, 0))
    access = cu.CUmemAccessDesc()
    access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = dev
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    check(cu.cuMemSetAccess(va, size, [access], 1))
    return handle, va


def vmm_free(handle, va, size):
    check(cu.cuMemUnmap(va, size))
    check(cu.cuMemAddressFree(va, size))
    check(cu.cuMemRelease(handle))


def shim_access(le_id, dev, offset, buf, write):
    """cuda-shim's cuShimLogicalEndpointAccess: the fabric get/put a kernel would make."""
    fn = ctypes.CDLL("libcuda.so.1").cuShimLogicalEndpointAccess
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_int]
    return cu.CUresult(fn(int(le_id), dev, offset, buf, len(buf), 1 if write else 0))


# --- types and ABI ---------------------------------------------------------------------------


def test_enum_values_and_the_prop_struct_layout():
    assert (int(UNICAST), int(MULTICAST), int(FABRIC), int(COUNTED)) == (1, 2, 1, 1)
    p = unicast(1, 0x1122334455667788, FABRIC, COUNTED)
    assert (p.type, int(p.unicast.device), p.size, p.ipcHandleTypes, p.flags) == (UNICAST, 1, 0x1122334455667788, 1, 1)
    # 24 bytes, as the driver reads them: type, the union, size at 8, ipcHandleTypes, flags.
    raw = ctypes.string_at(p.getPtr(), 24)
    assert raw == bytes.fromhex("01000000" "01000000" "8877665544332211" "01000000" "01000000")
    p.type = MULTICAST
    p.multicast.numDevices = 3
    assert int(p.unicast.device) == 3  # one union: the same 4 bytes
    assert len(cu.CUlogicalEndpointFabricHandle().data) == 64


def test_device_attributes_153_to_156_report_support(device):
    A = cu.CUdevice_attribute
    names = ("UNICAST_SUPPORTED", "MULTICAST_SUPPORTED", "COUNTED_OPS_SUPPORTED", "UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED")
    attrs = [getattr(A, f"CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_{n}") for n in names]
    assert [int(a) for a in attrs] == [153, 154, 155, 156]
    for dev in range(check(cu.cuDeviceGetCount())):
        assert [check(cu.cuDeviceGetAttribute(a, dev)) for a in attrs] == [1, 1, 1, 1]


# --- one process -----------------------------------------------------------------------------


def test_bind_alignment_divides_the_vmm_granularity(device):
    align, max_size = (int(x) for x in check(cu.cuLogicalEndpointGetLimits(unicast(0, 0))))
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    gran = int(check(cu.cuMemGetAllocationGranularity(prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
    assert align > 0 and gran % align == 0
    assert max_size >= align and max_size % align == 0


def test_unicast_lifecycle_and_its_invalid_values(device):
    align = alignment()
    size = 4 * align
    base = int(check(cu.cuLogicalEndpointIdReserve(2)))
    check(cu.cuLogicalEndpointCreate(base, unicast(0, size)))
    handle, va = vmm(0, 2 * align, fabric=False)
    # Memory binds only once Query has reported the id ready.
    assert cu.cuLogicalEndpointBindAddr(base, 0, 0, va, align, 0) == (INVALID,)
    wait_ready(base)
    assert cu.cuLogicalEndpointBindAddr(base, 0, align // 2, va, align, 0) == (INVALID,)  # misaligned offset
    check(cu.cuLogicalEndpointBindAddr(base, 0, 0, va, align, 0))
    check(cu.cuLogicalEndpointBindMem(base, 0, align, handle, align, align, 0))
    check(cu.cuLogicalEndpointUnbind(base, 0, 0, 2 * align))  # the combined size of adjacent binds
    check(cu.cuLogicalEndpointBindMem(base, 0, 2 * align, handle, 0, 2 * align, 0))
    # An id still associated with an endpoint is not released (nor any of its range).
    assert cu.cuLogicalEndpointIdRelease(base, 2) == (INVALID,)
    check(cu.cuLogicalEndpointDestroy(base))  # unbinds what is still bound
    check(cu.cuLogicalEndpointIdRelease(base, 2))
    vmm_free(handle, va, 2 * align)


@pytest.mark.shim_only
def test_construction_takes_time_and_query_says_so(device, monkeypatch):
    # cuda-shim builds an endpoint in CUDA_SHIM_LE_BUILD_US (default 1000 µs); longer here, so
    # that "not ready yet" cannot be missed on a slow machine. Read at each call.
    monkeypatch.setenv("CUDA_SHIM_LE_BUILD_US", "200000")
    base = int(check(cu.cuLogicalEndpointIdReserve(1)))
    start = time.monotonic()
    check(cu.cuLogicalEndpointCreate(base, unicast(0, alignment())))
    assert check(cu.cuLogicalEndpointQuery(base, 1)) == 0
    assert wait_ready(base) > 0
    assert time.monotonic() - start >= 0.19
    check(cu.cuLogicalEndpointDestroy(base))
    check(cu.cuLogicalEndpointIdRelease(base, 1))


# --- across processes ------------------------------------------------------------------------

LE_SIZE = 4 * MIB  # the endpoint; its first MEM_SIZE bytes are bound to the parent's memory
MEM_SIZE = 2 * MIB


@pytest.fixture
def exported(device):
    """A FABRIC unicast endpoint on device 0 with fabric memory bound at [0, MEM_SIZE), filled
    with pattern seed 1, exported: (memory va, the handle's 64 bytes)."""
    base = int(check(cu.cuLogicalEndpointIdReserve(1)))
    check(cu.cuLogicalEndpointCreate(base, unicast(0, LE_SIZE, FABRIC)))
    wait_ready(base)
    handle, va = vmm(0, MEM_SIZE, fabric=True)
    check(cu.cuMemcpyHtoD(va, helpers.pattern(MEM_SIZE, 1), MEM_SIZE))
    check(cu.cuLogicalEndpointBindMem(base, 0, 0, handle, 0, MEM_SIZE, 0))
    fabric_handle = check(cu.cuLogicalEndpointExport(base, FABRIC))
    yield va, bytes(fabric_handle.data)
    check(cu.cuLogicalEndpointUnbind(base, 0, 0, MEM_SIZE))
    check(cu.cuLogicalEndpointDestroy(base))
    check(cu.cuLogicalEndpointIdRelease(base, 1))
    vmm_free(handle, va, MEM_SIZE)


def _peer_imports(handle_bytes, n_ids):
    """In a child, current on the second device (a peer rank): n_ids reserved, the first one
    importing the parent's endpoint."""
    helpers.current_device(1 if check(cu.cuDeviceGetCount()) > 1 else 0)
    base = int(check(cu.cuLogicalEndpointIdReserve(n_ids)))
    check(cu.cuLogicalEndpointImport(base, handle_bytes, FABRIC))
    return base


def child_binding_an_import_is_refused(handle_bytes):
    base = _peer_imports(handle_bytes, 2)
    wait_ready(base)
    handle, va = vmm(0, MEM_SIZE, fabric=True)  # the owner's device, fabric-shareable: bindable
    assert cu.cuLogicalEndpointBindMem(base, 0, 0, handle, 0, MEM_SIZE, 0) == (INVALID,)
    assert cu.cuLogicalEndpointBindAddr(base, 0, 0, va, MEM_SIZE, 0) == (INVALID,)
    # The same binds into an endpoint of the child's own: accepted.
    check(cu.cuLogicalEndpointCreate(base + 1, unicast(0, LE_SIZE, FABRIC)))
    wait_ready(base + 1)
    check(cu.cuLogicalEndpointBindMem(base + 1, 0, 0, handle, 0, MEM_SIZE, 0))
    check(cu.cuLogicalEndpointBindAddr(base + 1, 0, MEM_SIZE, va, MEM_SIZE, 0))
    check(cu.cuLogicalEndpointDestroy(base + 1))
    check(cu.cuLogicalEndpointDestroy(base))
    check(cu.cuLogicalEndpointIdRelease(base, 2))
    vmm_free(handle, va, MEM_SIZE)


def test_a_child_imports_the_endpoint_and_cannot_bind_it(exported):
    _, handle_bytes = exported
    helpers.run_child(child_binding_an_import_is_refused, handle_bytes)


def child_gets_and_puts(handle_bytes, get_at, get_size, put_at, put):
    base = _peer_imports(handle_bytes, 1)
    got = ctypes.create_string_buffer(get_size)
    assert shim_access(base, -1, get_at, got, write=False) == INVALID  # not seen ready yet
    wait_ready(base)
    assert shim_access(base, -1, get_at, got, write=False) == OK
    assert shim_access(base, -1, MEM_SIZE, got, write=False) == INVALID  # past the bound memory
    assert shim_access(base, 0, put_at, ctypes.create_string_buffer(put, len(put)), write=True) == OK
    check(cu.cuLogicalEndpointDestroy(base))
    check(cu.cuLogicalEndpointIdRelease(base, 1))
    return got.raw


@pytest.mark.shim_only
def test_a_child_reaches_the_parents_memory_through_the_endpoint(exported):
    va, handle_bytes = exported
    get_at, get_size, put_at = MEM_SIZE - 8192, 8192, 4096
    put = helpers.pattern(4096, 99)
    got = helpers.run_child(child_gets_and_puts, handle_bytes, get_at, get_size, put_at, put)
    assert got == helpers.pattern(MEM_SIZE, 1)[get_at:]
    host = bytearray(3 * 4096)
    check(cu.cuMemcpyDtoH(host, int(va), len(host)))
    assert bytes(host) == helpers.pattern(4096, 1) + put + helpers.pattern(3 * 4096, 1)[2 * 4096:]
