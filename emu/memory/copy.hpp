// The copy and fill engine behind every cuMemcpy* / cuMemset* entry: resolve each
// pointer through the address space (device, pinned or registered host, or plain
// pageable host memory), check that the touched bytes lie inside their allocation,
// then run the work in stream order through the shadow mappings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda.h>

#include "core/capture.hpp"
#include "core/errc.hpp"
#include "memory/address_space.hpp"

namespace cuda_shim::mem {

// The bytes a strided copy touches on one side: depth slices of height rows of width bytes.
struct Extent {
  size_t width = 0, height = 1, depth = 1;
  size_t pitch = 0;  // bytes between rows
  size_t slice = 0;  // bytes between slices
  // Bytes from the first to one past the last touched byte.
  size_t span() const {
    if (width == 0 || height == 0 || depth == 0) return 0;
    return (depth - 1) * slice + (height - 1) * pitch + width;
  }
  bool contiguous() const { return (height == 1 || pitch == width) && (depth == 1 || slice == width * height); }
};

// One end of a copy, resolved.
struct Side {
  char* p = nullptr;  // emulator-side address of the first byte
  RangePtr r;         // keeps the mapping alive; null for pageable host memory
  size_t pitch = 0, slice = 0;
  std::shared_ptr<std::vector<RangePtr>> more;  // further VMM mappings the bytes run into
  bool pageable() const { return !r; }
};

// How to read a pointer argument.
enum class Space {
  device,   // must be memory the driver allocated or registered
  host,     // pinned/registered memory, or else plain pageable host memory
  unified,  // classified by address (cuMemcpy, CU_MEMORYTYPE_UNIFIED)
};

// Resolve p (whose first touched byte is at p, extent e) as `space`. `what` names the
// argument in explanations ("dstDevice").
Errc resolve(uintptr_t p, Space space, const Extent& e, const char* api, const char* what, Side& out);

// Refuses a destination the device may not write (read-only registered host memory).
Errc check_writable(const Side& s, const char* api, const char* what);

struct CopyOp {
  Side dst, src;
  size_t width = 0, height = 1, depth = 1;
  void run() const;
};

struct FillOp {
  Side dst;
  unsigned value = 0;
  unsigned elem = 1;  // 1, 2 or 4 bytes
  size_t width = 0;   // elements per row
  size_t height = 1;
  void run() const;
};

// n bytes at p set to zero, split over the copy threads where large (as a fill would be).
void zero_bytes(char* p, size_t n);

// Submission. Synchronous forms run in order on the default stream (legacy, or
// per-thread for _ptds) and return when done; async forms queue on hStream.
struct Submit {
  bool async = false;
  CUstream stream = nullptr;
  bool per_thread = false;
  bool dry = false;  // check everything, queue nothing (a graph node's arguments, checked when added)
  // The source is read before the call returns, whatever memory it is (a batch copy's
  // CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL): staged as a pageable source is.
  bool stage = false;
};
Errc submit_copy(CopyOp op, const Submit& how, const char* api);
Errc submit_fill(FillOp op, const Submit& how, const char* api);

// 2D/3D descriptor handling shared by cuMemcpy2D*/3D*/3DPeer*.
struct Copy3DArgs {
  size_t srcX, srcY, srcZ;
  CUmemorytype srcType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch, srcHeight;
  size_t dstX, dstY, dstZ;
  CUmemorytype dstType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch, dstHeight;
  size_t width, height, depth;
};
Errc copy_3d(const Copy3DArgs& a, const Submit& how, const char* api);

// Graph nodes (cuGraphAddMemcpyNode, cuGraphAddMemsetNode): the arguments checked as the async
// call checks them, and a Spec whose issue makes that call on the launch stream.
Errc copy_node(const CUDA_MEMCPY3D& c, cap::Spec& out, const char* api);
Errc fill_node(const CUDA_MEMSET_NODE_PARAMS& p, cap::Spec& out, const char* api);

}  // namespace cuda_shim::mem
