# h100: one NVIDIA H100 SXM5 80 GB, as the H200 profile with the H100's differences.
#
# Sources:
#  - measured on NVIDIA's driver (580.159.04) on a lent H100 host: the name (nvidia-smi, kept in
#    tests/conformance/data/multidevice.h100x2.txt), the memory size (cuMemGetInfo total), the
#    SM and memory clocks (nvmlDeviceGetMaxClockInfo) in tools/probe/probe_nvml.h100.txt;
#  - NVIDIA H100 Tensor Core GPU Architecture whitepaper (v1.0, 2022), H100 SXM5: 132 SMs,
#    50 MB L2, five HBM3 stacks on ten 512-bit controllers (5120-bit bus), compute capability 9.0;
#  - the PCI device id 0x2330 (10de:2330, H100 SXM5 80GB) from the PCI ID repository.
# Derived: MAX_PERSISTING_L2_CACHE_SIZE is 5/8 of L2, the ratio the H200 reports.
# Everything else (per-block limits, texture sizes, capabilities) is the H200's: the same
# compute capability 9.0, whose limits the CUDA C++ Programming Guide gives per capability.

base = h200
description = one NVIDIA H100 SXM5 80 GB (Hopper, compute capability 9.0)
name = NVIDIA H100 80GB HBM3
total_mem = 85017493504

CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 132
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 1980000
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 2619000
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 5120
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 52428800
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 32768000
CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 0x233010de
