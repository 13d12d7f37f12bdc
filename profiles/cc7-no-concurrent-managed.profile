# cc7-no-concurrent-managed: a compute capability 7.0 GPU, an NVIDIA Tesla V100 SXM2 32 GB,
# without concurrent managed access (as a Windows driver, or Linux without HMM on an older
# board, presents managed memory): the host may not touch managed memory while the device
# runs work, and memory the device may use is not reachable through pageable pointers.
#
# Sources:
#  - NVIDIA Tesla V100 GPU Architecture whitepaper (v1.1, 2017): 80 SMs, 1530 MHz boost
#    clock, 6 MB L2, 4096-bit HBM2 at 900 GB/s (an 877 MHz memory clock), compute
#    capability 7.0;
#  - CUDA C++ Programming Guide, "Compute Capabilities" (7.0): 96 KB shared memory per SM and
#    per block with opt-in, 2048 threads and 32 blocks per SM; no L2 persistence (8.0 added
#    it: MAX_PERSISTING_L2_CACHE_SIZE and MAX_ACCESS_POLICY_WINDOW_SIZE 0), no clusters, TMA,
#    memory synchronization domains, fabric handles or multicast;
#  - CUDA C++ Programming Guide, "Unified Memory" (devices without concurrentManagedAccess):
#    CONCURRENT_MANAGED_ACCESS 0, and with it no direct host access;
#  - the PCI device id 0x1db5 (10de:1db5, V100-SXM2-32GB) from the PCI ID repository.
# total_mem is 32 GiB; the driver's figure is a little lower (not measured here).

base = h200
description = one NVIDIA Tesla V100 (compute capability 7.0) without concurrent managed access
name = Tesla V100-SXM2-32GB
total_mem = 34359738368

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 7
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 0
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 80
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 1530000
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 877000
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 4096
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 6291456
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 98304
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 98304
CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 0
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 0
CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 0
CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0
CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 0
CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 0
CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 0
CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 1
CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 1
CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 0x1db510de
