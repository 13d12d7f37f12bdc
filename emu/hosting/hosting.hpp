// Hosting NVIDIA's own CUDA runtime: the private tables its libcudart (static, inside every
// binary nvcc builds by default, or the shared libcudart.so.13) asks the driver for through
// cuGetExportTable. Each table is a static array of function pointers identified by a 16-byte
// id; most start with their own size in bytes. docs/dark-api.md lists every table and slot.
//
// Slots are called by NVIDIA's code directly, never through a C entry point of ours, so each
// one runs its body through abi::driver_call: traced under CUDA_SHIM_TRACE, explained under
// CUDA_SHIM_EXPLAIN, exceptions turned into CUDA_ERROR_UNKNOWN. A slot whose meaning nobody
// has documented answers CUDA_ERROR_NOT_SUPPORTED and names its table and index.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace cuda_shim::hosting {

// One private table: its id, our name for it, and where it lives.
struct TableInfo {
  unsigned char id[16];
  const char* name;
  const void* table;  // what cuGetExportTable hands out
  size_t slots;       // how many pointer-sized words it has, size word included
};

// The table with this id, or null when cuda-shim does not host it.
const TableInfo* find_table(const CUuuid& id) noexcept;
// Every hosted table, for documentation and tests.
const TableInfo* tables(size_t& count) noexcept;

// Table ids (byte order as cuGetExportTable receives them).
extern const unsigned char kCudartInterfaceId[16];   // 6bd5fb6c...
extern const unsigned char kIntegrityCheckId[16];    // d4082055...

// The tables the integrity check hashes the addresses of (tables.cpp).
const void* cudart_interface_table() noexcept;
const void* integrity_check_table() noexcept;
const void* integrity_check_slot() noexcept;  // the value of the integrity table's slot 1

// ---- slot implementations, one file each -----------------------------------------------
// integrity.cpp
CUresult CUDAAPI integrity_check(unsigned version, unsigned long long unix_seconds, unsigned long long* result);
// The keyed digest itself (HMAC with MD2, key and message layout in docs/dark-api.md); exposed for tests.
void integrity_digest(const unsigned char* message, size_t len, unsigned char out[16]) noexcept;
void md2(const unsigned char* message, size_t len, unsigned char out[16]) noexcept;

// context_storage.cpp: per-context key/value pairs with a destructor callback each.
using ClsDestructor = void (*)(CUcontext ctx, void* key, void* value);
CUresult CUDAAPI cls_put(CUcontext ctx, void* key, void* value, ClsDestructor dtor);
CUresult CUDAAPI cls_delete(CUcontext ctx, void* key);
CUresult CUDAAPI cls_get(void** value, CUcontext ctx, void* key);

// runtime_iface.cpp: the CUDART_INTERFACE, TOOLS_*, CONTEXT_CHECKS slots.
CUresult CUDAAPI load_fatbin_wrapper(CUmodule* module, const void* wrapper);
CUresult CUDAAPI get_primary_context(CUcontext* pctx, CUdevice dev);
CUresult CUDAAPI load_fatbin_wrapper_ex(CUmodule* module, const void* wrapper, void* a3, void* a4, unsigned a5);
void CUDAAPI cudart_slot7(size_t arg);
CUresult CUDAAPI load_fatbin_ex(const void* fatbin, CUmodule* module, void* a3, void* a4, unsigned a5);
CUresult CUDAAPI load_compilers();
void CUDAAPI tools_callback_table(void** table, size_t* entries);
void CUDAAPI tools_callback_table2(void** table, size_t* entries);
CUresult CUDAAPI context_check(CUcontext ctx, unsigned* flags, const void** extra);
unsigned CUDAAPI context_check_flags();

}  // namespace cuda_shim::hosting
