# tcc-no-pools: the H200 as a driver that offers no stream-ordered memory pools presents it:
# MEMORY_POOLS_SUPPORTED 0 (cudaMallocAsync's documented check), no pool handle types, no
# host-located pools, and TCC_DRIVER 1 (the Windows compute driver model).
#
# Source: the CUDA Runtime API reference, cudaDevAttrMemoryPoolsSupported and "Stream Ordered
# Memory Allocator" (applications check this attribute before using pools). For a program's
# fallback path: the stream-ordered allocator and the pool entries answer NOT_SUPPORTED, as
# the CUDA reference gives for a device without pools (docs/configuration.md).

base = h200
description = the H200 without memory pools (MEMORY_POOLS_SUPPORTED 0), TCC driver model

CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 1
CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 0
CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 0
