# b200: one NVIDIA B200 of an HGX B200 board (Blackwell), as the H200 profile with the B200's
# differences.
#
# Sources:
#  - NVIDIA DGX B200 datasheet: 1,440 GB of HBM3e over eight GPUs (180 GB each), 64 TB/s
#    (8 TB/s each), fifth-generation NVLink through NVLink switches;
#  - NVIDIA Blackwell architecture technical brief: eight HBM3e stacks per GPU (an 8192-bit
#    bus), so a 3906 MHz memory clock (8e12 B/s / (8192 bit / 8) / 2); compute capability 10.0;
#  - CUDA C++ Programming Guide, "Compute Capabilities" (10.0): the same per-SM and per-block
#    limits as 9.0 (228 KB shared memory per SM, 227 KB per block, 2048 threads, 32 blocks);
#  - NVLink switches give multicast objects (cuMulticastCreate: NVLink SHARP) and, with IMEX,
#    fabric handles: MULTICAST_SUPPORTED 1 (the measured H200 stood alone: 0);
#  - the PCI device id 0x2901 (10de:2901, B200) from the PCI ID repository.
# Not published by NVIDIA as device attributes, so taken from public deviceQuery output of
# B200 systems: 148 SMs and a 126 MB L2 (132644864 bytes). Kept from the H200 (not published):
# the SM clock and the persisting-L2 limit.
# total_mem is the datasheet's 180 GB (decimal); the driver's figure is not measured here.

base = h200
description = one NVIDIA B200 (Blackwell, compute capability 10.0, NVLink multicast)
name = NVIDIA B200
total_mem = 180000000000

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 10
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 0
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 148
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 3906000
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 8192
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 132644864
CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 1
CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 0x290110de
