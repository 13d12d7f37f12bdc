# a100: one NVIDIA A100 SXM4 80 GB (Ampere), as the H200 profile with the A100's differences.
#
# Sources:
#  - NVIDIA A100 Tensor Core GPU Architecture whitepaper (v1.0, 2020) and the A100 datasheet
#    (80 GB): 108 SMs, 40 MB L2, 5120-bit HBM2e bus, 1410 MHz boost clock, 2039 GB/s
#    (so a 1593 MHz memory clock: 2039e9 B/s / (5120 bit / 8) / 2), compute capability 8.0;
#  - CUDA C++ Programming Guide, "Compute Capabilities" (8.0): 164 KB shared memory per SM,
#    163 KB per block with opt-in, 2048 threads and 32 blocks per SM; no thread block
#    clusters, no tensor memory access (TMA), one memory synchronization domain (9.0 added them);
#  - CUDA Programming Guide, L2 access management: up to 30 MB of the A100's L2 for persisting
#    accesses;
#  - the PCI device id 0x20b2 (10de:20b2, A100-SXM4-80GB) from the PCI ID repository.
# Not modelled: fabric handles (HANDLE_TYPE_FABRIC needs a Hopper-or-later NVLink fabric with
# IMEX) and multicast are off, so pools export POSIX file descriptors only (handle types 1).
# total_mem is 80 GiB, what nvidia-smi reports as the board's size; the driver's figure is a
# little lower (not measured here).

base = h200
description = one NVIDIA A100 SXM4 80 GB (Ampere, compute capability 8.0, no fabric handles)
name = NVIDIA A100-SXM4-80GB
total_mem = 85899345920

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 8
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 0
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 108
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 1410000
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 1593000
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 5120
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 41943040
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 31457280
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 167936
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 166912
CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 0
CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 1
CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 1
CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 0
CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 0x20b210de
