# gb200-nvl72: the 72 GPUs of one NVIDIA GB200 NVL72 rack, in one NVLink domain, as the B200
# profile with the GB200's differences.
#
# The rack: 18 compute trays (nodes), each with two GB200 superchips, each superchip one Grace
# CPU and two Blackwell GPUs joined by NVLink-C2C; all 72 GPUs share one NVLink domain through
# the NVLink switch trays. The emulator has no nodes: the 72 devices are one process's
# devices 0..71, in node order (node = ordinal / 4), and each Grace CPU is a host NUMA node
# (HOST_NUMA_ID = ordinal / 2: nodes 0..35). Memory crosses the domain by fabric handles
# (CU_MEM_HANDLE_TYPE_FABRIC), which need an IMEX channel as on the real rack:
# CUDA_SHIM_IMEX_CHANNEL=0 puts a process in the IMEX domain (channel 0).
#
# Sources:
#  - NVIDIA GB200 NVL72 product page and datasheet: 72 Blackwell GPUs and 36 Grace CPUs,
#    up to 13.4 TB of HBM3e (186 GB per GPU, decimal), 576 TB/s (8 TB/s per GPU), one
#    130 TB/s NVLink domain;
#  - NVIDIA Grace Hopper / Grace Blackwell coherence (CUDA C++ Programming Guide, "Unified
#    Memory" on hardware-coherent systems): the GPU reaches pageable host memory through the
#    host's page tables (PAGEABLE_MEMORY_ACCESS and _USES_HOST_PAGE_TABLES 1), the host reaches
#    managed memory directly (DIRECT_MANAGED_MEM_ACCESS_FROM_HOST 1) and atomics are native
#    both ways over NVLink-C2C (HOST_NATIVE_ATOMIC_SUPPORTED 1);
#  - NVIDIA IMEX service guide: fabric handles are exported and imported within an IMEX
#    domain (HANDLE_TYPE_FABRIC_SUPPORTED 1, pools' handle types POSIX fd | fabric = 9);
#  - the PCI device id 0x2941 (10de:2941, GB200) from the PCI ID repository.
# Not modelled: the GPU memory's own NUMA node (NUMA_CONFIG / NUMA_ID), which differs per
# device; the B200 profile's values stand for everything else.

base = b200
description = 72 NVIDIA GB200 GPUs of an NVL72 rack: 18 nodes, one NVLink domain, fabric handles, multicast
name = NVIDIA GB200
total_mem = 186000000000
devices = 72
devices_per_host_numa_node = 2

CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 1
CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 1
CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 1
CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 1
CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 1
CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 9
CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 1
CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 0x294110de
