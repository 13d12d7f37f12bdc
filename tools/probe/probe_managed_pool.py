# Managed-pool memory (cuMemPoolCreate with CU_MEM_ALLOCATION_TYPE_MANAGED) through cuda.bindings:
# range attributes, advice, prefetch, attach. Run: python3 probe_managed_pool.py (any driver).
# Output on an H200 (driver 580.159.04): probe_managed_pool.h200.txt; the emulator matches it line for line.
import ctypes
from cuda.bindings import driver as cu
def ok(r): 
    assert r[0] == cu.CUresult.CUDA_SUCCESS, r
    return r[1] if len(r) == 2 else r[1:]
ok(cu.cuInit(0)); dev = ok(cu.cuDeviceGet(0)); ctx = ok(cu.cuDevicePrimaryCtxRetain(dev)); ok((cu.cuCtxSetCurrent(ctx)[0], None))
s = ok(cu.cuStreamCreate(1))
A = cu.CUmem_range_attribute
L = cu.CUmemLocationType
def loc(t, i):
    l = cu.CUmemLocation(); l.type = t; l.id = i; return l
def attrs(p, n):
    out = {}
    for name in ('READ_MOSTLY','PREFERRED_LOCATION','LAST_PREFETCH_LOCATION','PREFERRED_LOCATION_TYPE','PREFERRED_LOCATION_ID','LAST_PREFETCH_LOCATION_TYPE','LAST_PREFETCH_LOCATION_ID'):
        r = cu.cuMemRangeGetAttribute(4, getattr(A, 'CU_MEM_RANGE_ATTRIBUTE_' + name), p, n)
        out[name] = (int(r[0]), r[1])
    r = cu.cuMemRangeGetAttribute(12, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, n)
    out['ACCESSED_BY'] = (int(r[0]), r[1])
    return out
def pools():
    yield 'current', ok(cu.cuMemGetMemPool(loc(L.CU_MEM_LOCATION_TYPE_DEVICE, 0), cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED)) if True else None
    for lname, t, i in [('none', L.CU_MEM_LOCATION_TYPE_INVALID, 0), ('device0', L.CU_MEM_LOCATION_TYPE_DEVICE, 0), ('host', L.CU_MEM_LOCATION_TYPE_HOST, 0), ('hostnuma0', L.CU_MEM_LOCATION_TYPE_HOST_NUMA, 0)]:
        pp = cu.CUmemPoolProps(); pp.allocType = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED; pp.location.type = t; pp.location.id = i
        r = cu.cuMemPoolCreate(pp)
        print(lname, 'create', int(r[0]))
        if r[0] == 0: yield lname, r[1]
for name, pool in pools():
    n = 2 << 20
    r = cu.cuMemAllocFromPoolAsync(n, pool, s); print(name, 'alloc', int(r[0]))
    if r[0]: continue
    p = int(r[1]); ok((cu.cuStreamSynchronize(s)[0], None))
    print(name, 'fresh', attrs(p, n))
    print(name, 'fresh.sub', attrs(p + 4096, 4096))
    pa = {}
    for a in ('IS_MANAGED', 'MEMORY_TYPE', 'RANGE_START_ADDR', 'RANGE_SIZE', 'DEVICE_ORDINAL', 'MAPPED', 'IS_LEGACY_CUDA_IPC_CAPABLE', 'ALLOWED_HANDLE_TYPES'):
        rr = cu.cuPointerGetAttribute(getattr(cu.CUpointer_attribute, 'CU_POINTER_ATTRIBUTE_' + a), p + 8); pa[a] = (int(rr[0]), rr[1] if not hasattr(rr[1], '__int__') else int(rr[1]))
    print(name, 'ptr', pa)
    ctypes.memset(p, 3, 64); print(name, 'host rw', ctypes.string_at(p, 4))
    for adv in ('SET_READ_MOSTLY', 'UNSET_READ_MOSTLY', 'SET_PREFERRED_LOCATION', 'UNSET_PREFERRED_LOCATION', 'SET_ACCESSED_BY', 'UNSET_ACCESSED_BY'):
        for lt, li in ((L.CU_MEM_LOCATION_TYPE_DEVICE, 0), (L.CU_MEM_LOCATION_TYPE_HOST, 0)):
            print(name, 'advise', adv, int(lt), int(cu.cuMemAdvise(p, n, getattr(cu.CUmem_advise, 'CU_MEM_ADVISE_' + adv), loc(lt, li))[0]))
    print(name, 'advise.sub', int(cu.cuMemAdvise(p + 4096, 4096, cu.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, loc(L.CU_MEM_LOCATION_TYPE_DEVICE, 0))[0]))
    for lname2, lt, li in (('host', L.CU_MEM_LOCATION_TYPE_HOST, 0), ('dev0', L.CU_MEM_LOCATION_TYPE_DEVICE, 0), ('hostnuma0', L.CU_MEM_LOCATION_TYPE_HOST_NUMA, 0), ('hostcur', L.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0)):
        r = cu.cuMemPrefetchAsync(p, n, loc(lt, li), 0, s); cu.cuStreamSynchronize(s)
        print(name, 'prefetch', lname2, int(r[0]), attrs(p, n))
    r = cu.cuMemPrefetchAsync(p, 4096, loc(L.CU_MEM_LOCATION_TYPE_HOST, 0), 0, s); cu.cuStreamSynchronize(s)
    print(name, 'prefetch.sub host', int(r[0]), attrs(p, 4096), attrs(p, n)['LAST_PREFETCH_LOCATION_TYPE'])
    print(name, 'attach', int(cu.cuStreamAttachMemAsync(s, p, 0, 4)[0]), int(cu.cuStreamSynchronize(s)[0]))
    print(name, 'attach.global', int(cu.cuStreamAttachMemAsync(s, p, 0, 1)[0]), int(cu.cuStreamSynchronize(s)[0]))
    print(name, 'free', int(cu.cuMemFreeAsync(p, s)[0]), int(cu.cuStreamSynchronize(s)[0]))
    if name != 'current': print(name, 'destroy', int(cu.cuMemPoolDestroy(pool)[0]))
print('unknown', cu.cuGetProcAddress(b'cuNoSuchFunction', 13000, 0))
print('unknown.newer', cu.cuGetProcAddress(b'cuNoSuchFunction', 13090, 0))
