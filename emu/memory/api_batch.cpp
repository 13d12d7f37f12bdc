// Driver entries: the batch copies cuMemcpyBatchAsync and cuMemcpy3DBatchAsync (CUDA 13's _v2
// forms, and CUDA 12.8's with failIdx, which the un-suffixed symbols keep), and CUDA 13.2's
// single copies with the same attributes (cuMemcpyWithAttributesAsync, cuMemcpy3D...). Each copy of a batch
// is an ordinary copy of its stream (copy.cpp), so a batch runs in stream order, copies within it
// in their list's order. Rules marked "measured" come from the H200 (driver 580, CUDA 13.0;
// tests/probe/cases/batch.cases):
//  - The NULL stream and CU_STREAM_LEGACY are refused, in the _ptsz forms too; failIdx is left
//    alone for NULL and reads SIZE_MAX for every error not tied to one copy.
//  - The lists (counts, attribute indices, orders, flags, location hints) are checked before
//    anything is queued. Then each copy of cuMemcpyBatchAsync is checked and queued in turn:
//    a bad copy answers INVALID_VALUE with failIdx at it, and the copies before it still run.
//    cuMemcpy3DBatchAsync checks every operation's fields first (failIdx at the bad one), and
//    its memory (a NULL pointer, a box that does not fit) when the operation is queued
//    (failIdx SIZE_MAX, the operations before it still run).
//  - In a capture, a well-formed batch answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the
//    capture goes on (nothing is captured, the capture is not invalidated).
//  - CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL: the source is read before the call returns,
//    even on a busy stream (the copy is staged, as a pageable source is).
#include <cstdint>
#include <string>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/array.hpp"
#include "memory/copy.hpp"

namespace cuda_shim::api {
namespace {

using mem::Space;

constexpr size_t kNoIndex = SIZE_MAX;

void set_fail(size_t* fail_idx, size_t v) {
  if (fail_idx) *fail_idx = v;
}

// The stream of a batch (measured: NULL and CU_STREAM_LEGACY are INVALID_VALUE; only the legacy
// stream's refusal writes failIdx).
Errc batch_stream(CUstream h, size_t* fail_idx, const char* api, std::shared_ptr<Stream>& st) {
  if (!h)
    return fail(Errc::invalid_value, "{}: hStream is NULL: a batch must go to a stream other than the legacy "
                "default stream (a created stream or CU_STREAM_PER_THREAD)", api);
  set_fail(fail_idx, kNoIndex);
  if (h == CU_STREAM_LEGACY)
    return fail(Errc::invalid_value, "{}: hStream is CU_STREAM_LEGACY: a batch must go to a stream other than the "
                "legacy default stream (a created stream or CU_STREAM_PER_THREAD)", api);
  return resolve_stream(h, false, api, st);
}

// A well-formed batch on a capturing stream (measured): refused, and the capture goes on.
Errc refuse_in_capture(Stream& st, const char* api) {
  if (cap::g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(st, api, seq));
  if (seq)
    return fail(Errc::stream_capture_unsupported, "{}: batch copies cannot be captured into a graph (the capture "
                "goes on; capture the copies one by one instead)", api);
  return Errc::success;
}

Errc check_order(int order, const char* api, const std::string& what) {
  if (order >= CU_MEMCPY_SRC_ACCESS_ORDER_STREAM && order <= CU_MEMCPY_SRC_ACCESS_ORDER_ANY) return Errc::success;
  return fail(Errc::invalid_value, "{}: {}.srcAccessOrder = {} is not STREAM (1), DURING_API_CALL (2) or ANY (3)",
              api, what, order);
}

Errc check_copy_flags(unsigned flags, const char* api, const std::string& what) {
  if ((flags & ~unsigned{CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE}) == 0) return Errc::success;  // measured: 2
  return fail(Errc::invalid_value, "{}: {}.flags = {:#x}: only CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (1) is "
              "defined", api, what, flags);
}

// A location hint is ignored for memory with a fixed place, but must name a real place
// (measured: device 5 of 1 is refused, for device memory as for managed; type 0 passes).
Errc check_hint(const CUmemLocation& l, const char* api, const std::string& what) {
  if (l.type == CU_MEM_LOCATION_TYPE_DEVICE && (l.id < 0 || l.id >= Driver::get().device_count()))
    return fail(Errc::invalid_value, "{}: {} names device {}, which does not exist ({} device(s))", api, what, l.id,
                Driver::get().device_count());
  if (l.type > CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return fail(Errc::invalid_value, "{}: {}.type = {} is not a CUmemLocationType", api, what,
                static_cast<int>(l.type));
  return Errc::success;
}

// attrs/attrsIdxs: numAttrs entries, the first at copy 0, each starting after the one before,
// all below count (measured).
Errc check_attrs(const CUmemcpyAttributes* attrs, const size_t* idx, size_t n, size_t count, const char* api) {
  if (n == 0 || !attrs || !idx)
    return fail(Errc::invalid_value, "{}: every copy needs attributes: numAttrs = {}, attrs {}, attrsIdxs {}", api, n,
                attrs ? "set" : "NULL", idx ? "set" : "NULL");
  if (n > count) return fail(Errc::invalid_value, "{}: numAttrs {} is more than count {}", api, n, count);
  if (idx[0] != 0) return fail(Errc::invalid_value, "{}: attrsIdxs[0] = {}; the first entry must be 0", api, idx[0]);
  for (size_t k = 0; k < n; ++k) {
    if (k > 0 && idx[k] <= idx[k - 1])
      return fail(Errc::invalid_value, "{}: attrsIdxs[{}] = {} does not come after attrsIdxs[{}] = {}", api, k, idx[k],
                  k - 1, idx[k - 1]);
    if (idx[k] >= count)
      return fail(Errc::invalid_value, "{}: attrsIdxs[{}] = {} is not below count {}", api, k, idx[k], count);
    const std::string what = "attrs[" + std::to_string(k) + "]";
    TRY(check_order(attrs[k].srcAccessOrder, api, what));
    TRY(check_copy_flags(attrs[k].flags, api, what));
    TRY(check_hint(attrs[k].srcLocHint, api, what + ".srcLocHint"));
    TRY(check_hint(attrs[k].dstLocHint, api, what + ".dstLocHint"));
  }
  return Errc::success;
}

mem::Submit submit_on(CUstream h, int order) {
  mem::Submit how{true, h, false};
  how.stage = order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  return how;
}

// Copy i of a pointer batch, checked and queued.
Errc queue_copy(CUdeviceptr dst, CUdeviceptr src, size_t n, const mem::Submit& how, size_t i, const char* api) {
  const std::string is = "[" + std::to_string(i) + "]";
  if (n == 0) return fail(Errc::invalid_value, "{}: sizes{} is 0", api, is);
  mem::CopyOp op;
  op.width = n;
  const mem::Extent e{n, 1, 1, n, n};
  TRY(mem::resolve(src, Space::unified, e, api, ("srcs" + is).c_str(), op.src));
  TRY(mem::resolve(dst, Space::unified, e, api, ("dsts" + is).c_str(), op.dst));
  TRY(mem::check_writable(op.dst, api, ("dsts" + is).c_str()));
  return mem::submit_copy(std::move(op), how, api);
}

Errc copy_batch(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
                size_t* idx, size_t n, size_t* fail_idx, CUstream h, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Stream> st;
  TRY(batch_stream(h, fail_idx, api, st));
  if (count == 0) return fail(Errc::invalid_value, "{}: count is 0", api);
  if (!dsts || !srcs || !sizes)
    return fail(Errc::invalid_value, "{}: dsts, srcs and sizes must all be set ({} is NULL)", api,
                !dsts ? "dsts" : !srcs ? "srcs" : "sizes");
  TRY(check_attrs(attrs, idx, n, count, api));
  TRY(refuse_in_capture(*st, api));
  size_t k = 0;  // the attributes of copy i: attrs[k]
  for (size_t i = 0; i < count; ++i) {
    while (k + 1 < n && idx[k + 1] <= i) ++k;
    if (Errc e = queue_copy(dsts[i], srcs[i], sizes[i], submit_on(h, attrs[k].srcAccessOrder), i, api);
        e != Errc::success) {
      set_fail(fail_idx, i);
      return e;
    }
  }
  return Errc::success;
}

// ---- cuMemcpy3DBatchAsync ---------------------------------------------------------------------

// One operand of a 3D batch copy, as one end of a cuMemcpy3D descriptor. Array offsets and row
// lengths count elements: the array's element size, or 1 between two pointers.
struct End3 {
  CUmemorytype type;
  CUdeviceptr ptr = 0;
  CUarray arr = nullptr;
  size_t x = 0, y = 0, z = 0, pitch = 0, height = 0;
};

Errc operand_elem(const CUmemcpy3DOperand& o, const char* api, const std::string& what, size_t& elem) {
  elem = 0;
  if (o.type == CU_MEMCPY_OPERAND_TYPE_POINTER) return Errc::success;
  if (o.type != CU_MEMCPY_OPERAND_TYPE_ARRAY)  // measured: 0 and 3
    return fail(Errc::invalid_value, "{}: {}.type = {} is not POINTER (1) or ARRAY (2)", api, what,
                static_cast<int>(o.type));
  // NULL and destroyed arrays crash NVIDIA's driver (measured); the documented error here.
  if (!o.op.array.array) return fail(Errc::invalid_value, "{}: {}.op.array.array is NULL", api, what);
  mem::ArrayPtr a;
  if (mem::array_arg(o.op.array.array, api, (what + ".op.array.array").c_str(), a) != Errc::success)
    return fail(Errc::invalid_value, "{}: {}.op.array.array = {} is not a live CUDA array", api, what,
                static_cast<void*>(o.op.array.array));
  elem = a->elem;
  return Errc::success;
}

Errc operand_end(const CUmemcpy3DOperand& o, const CUextent3D& ext, size_t elem, const char* api,
                 const std::string& what, End3& out) {
  if (o.type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
    const CUoffset3D& off = o.op.array.offset;
    out = End3{CU_MEMORYTYPE_ARRAY, 0, o.op.array.array, off.x * elem, off.y, off.z, 0, 0};
    return Errc::success;
  }
  const auto& p = o.op.ptr;
  if (p.rowLength != 0 && p.rowLength < ext.width)
    return fail(Errc::invalid_value, "{}: {}.op.ptr.rowLength {} is below the copy's width {}", api, what,
                p.rowLength, ext.width);
  if (p.layerHeight != 0 && p.layerHeight < ext.height)
    return fail(Errc::invalid_value, "{}: {}.op.ptr.layerHeight {} is below the copy's height {}", api, what,
                p.layerHeight, ext.height);
  const size_t row = (p.rowLength ? p.rowLength : ext.width) * elem;
  out = End3{CU_MEMORYTYPE_UNIFIED, p.ptr, nullptr, 0, 0, 0, row, p.layerHeight ? p.layerHeight : ext.height};
  return Errc::success;
}

// Operation i's fields, as a cuMemcpy3D descriptor.
Errc plan_3d(const CUDA_MEMCPY3D_BATCH_OP& op, size_t i, const char* api, mem::Copy3DArgs& a) {
  const std::string what = "opList[" + std::to_string(i) + "]";
  const CUextent3D& ext = op.extent;
  if (ext.width == 0 || ext.height == 0 || ext.depth == 0)
    return fail(Errc::invalid_value, "{}: {}.extent is {}x{}x{}; no component may be 0", api, what, ext.width,
                ext.height, ext.depth);
  TRY(check_order(op.srcAccessOrder, api, what));
  TRY(check_copy_flags(op.flags, api, what));
  size_t se = 0, de = 0;
  TRY(operand_elem(op.src, api, what + ".src", se));
  TRY(operand_elem(op.dst, api, what + ".dst", de));
  if (se && de && se != de)
    return fail(Errc::invalid_value, "{}: {} copies between arrays of {}-byte and {}-byte elements", api, what, se,
                de);
  const size_t elem = se ? se : de ? de : 1;
  End3 s, d;
  TRY(operand_end(op.src, ext, elem, api, what + ".src", s));
  TRY(operand_end(op.dst, ext, elem, api, what + ".dst", d));
  a = mem::Copy3DArgs{s.x, s.y, s.z, s.type, nullptr, s.ptr, s.arr, s.pitch, s.height,
                      d.x, d.y, d.z, d.type, nullptr, d.ptr, d.arr, d.pitch, d.height,
                      ext.width * elem, ext.height, ext.depth};
  return Errc::success;
}

Errc copy_3d_batch(size_t count, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* fail_idx, unsigned long long flags, CUstream h,
                   const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Stream> st;
  TRY(batch_stream(h, fail_idx, api, st));
  if (count == 0 || !ops)
    return fail(Errc::invalid_value, "{}: {}", api, count == 0 ? "numOps is 0" : "opList is NULL");
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags = {:#x} must be 0", api, flags);
  std::vector<mem::Copy3DArgs> plan(count);
  for (size_t i = 0; i < count; ++i)
    if (Errc e = plan_3d(ops[i], i, api, plan[i]); e != Errc::success) {
      set_fail(fail_idx, i);
      return e;
    }
  TRY(refuse_in_capture(*st, api));
  for (size_t i = 0; i < count; ++i)
    TRY(mem::copy_3d(plan[i], submit_on(h, ops[i].srcAccessOrder), api));
  return Errc::success;
}

// CUDA 13.2's single copies with attributes, as a batch of one (not measured: the GPU at hand
// runs a 13.0 driver). A zero-byte copy does nothing once its arguments pass, as cuMemcpyAsync's.
Errc copy_with_attributes(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes* attr, CUstream h,
                          const char* api) {
  size_t idx = 0;
  if (size != 0) return copy_batch(&dst, &src, &size, 1, attr, &idx, 1, nullptr, h, api);
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  std::shared_ptr<Stream> st;
  TRY(batch_stream(h, nullptr, api, st));
  TRY(check_attrs(attr, &idx, 1, 1, api));
  return refuse_in_capture(*st, api);
}

}  // namespace

Errc cuMemcpyBatchAsync_v2(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                           CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, CUstream hStream) noexcept {
  return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, nullptr, hStream, "cuMemcpyBatchAsync");
}
Errc cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                CUstream hStream) noexcept {
  return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, nullptr, hStream, "cuMemcpyBatchAsync");
}
Errc cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
                        size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream hStream) noexcept {
  return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, "cuMemcpyBatchAsync");
}
Errc cuMemcpyBatchAsync_ptsz(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                             CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, size_t* failIdx,
                             CUstream hStream) noexcept {
  return copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, "cuMemcpyBatchAsync");
}

Errc cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, unsigned long long flags,
                             CUstream hStream) noexcept {
  return copy_3d_batch(numOps, opList, nullptr, flags, hStream, "cuMemcpy3DBatchAsync");
}
Errc cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, unsigned long long flags,
                                  CUstream hStream) noexcept {
  return copy_3d_batch(numOps, opList, nullptr, flags, hStream, "cuMemcpy3DBatchAsync");
}
Errc cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx, unsigned long long flags,
                          CUstream hStream) noexcept {
  return copy_3d_batch(numOps, opList, failIdx, flags, hStream, "cuMemcpy3DBatchAsync");
}
Errc cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                               unsigned long long flags, CUstream hStream) noexcept {
  return copy_3d_batch(numOps, opList, failIdx, flags, hStream, "cuMemcpy3DBatchAsync");
}

Errc cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes* attr,
                                 CUstream hStream) noexcept {
  return copy_with_attributes(dst, src, size, attr, hStream, "cuMemcpyWithAttributesAsync");
}
Errc cuMemcpyWithAttributesAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes* attr,
                                      CUstream hStream) noexcept {
  return copy_with_attributes(dst, src, size, attr, hStream, "cuMemcpyWithAttributesAsync");
}
Errc cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP* op, unsigned long long flags, CUstream hStream) noexcept {
  return copy_3d_batch(1, op, nullptr, flags, hStream, "cuMemcpy3DWithAttributesAsync");
}
Errc cuMemcpy3DWithAttributesAsync_ptsz(CUDA_MEMCPY3D_BATCH_OP* op, unsigned long long flags,
                                        CUstream hStream) noexcept {
  return copy_3d_batch(1, op, nullptr, flags, hStream, "cuMemcpy3DWithAttributesAsync");
}

}  // namespace cuda_shim::api
