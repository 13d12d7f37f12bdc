// Struct fillers for the table's entries (fuzz_gen.hpp): mostly sensible fields, sometimes
// anything. Fields the driver dereferences (host pointers of copies, attribute arrays) get
// memory of this program sized so no extent the struct describes leaves it; handles and device
// addresses get what the pickers give.
#include "fuzz_gen.hpp"

namespace fz {
namespace {

// Copy geometry touching host memory stays small: (z + depth) x height x pitch + (y + rows) x
// pitch + x + width is at most 16 x 256 x 4096 + 320 x 4096 + 8192 bytes, well inside the
// host buffer past any offset a host pointer has.
size_t upto(Picker& pk, size_t most) {
  switch (pk.in.ConsumeIntegralInRange(0, 5)) {
    case 0: return 0;
    case 1: return most;
    case 2: return 1;
    default: return pk.in.ConsumeIntegralInRange<size_t>(0, most);
  }
}
size_t pitch(Picker& pk) {
  static const size_t v[] = {0, 1, 256, 512, 4096};
  return pk.in.ConsumeBool() ? v[pk.in.ConsumeIntegralInRange(0, 4)] : upto(pk, 4096);
}

// One side of a driver copy: its memory type and where it is.
struct Side {
  CUmemorytype type;
  const void* host = nullptr;
  CUdeviceptr dev = 0;
  CUarray array = nullptr;
};
Side side(Call& c) {
  Picker& pk = c.pk;
  Side s;
  int k = pk.in.ConsumeIntegralInRange(0, 9);
  s.type = k < 2 ? CU_MEMORYTYPE_HOST : k < 5 ? CU_MEMORYTYPE_DEVICE : k < 7 ? CU_MEMORYTYPE_ARRAY
           : k < 9 ? CU_MEMORYTYPE_UNIFIED : static_cast<CUmemorytype>(pk.in.ConsumeIntegral<int>());
  switch (s.type) {
    case CU_MEMORYTYPE_HOST: s.host = pk.host(); break;
    case CU_MEMORYTYPE_DEVICE: s.dev = pk.dptr(); break;
    case CU_MEMORYTYPE_ARRAY: s.array = pk.pick(S.arrays); break;
    case CU_MEMORYTYPE_UNIFIED: s.dev = reinterpret_cast<CUdeviceptr>(pk.uptr()); break;
    default: break;  // an unknown type: nothing to point at
  }
  return s;
}

CUlaunchAttributeValue& val(CUlaunchAttribute& a) { return a.value; }
cudaLaunchAttributeValue& val(cudaLaunchAttribute& a) { return a.val; }

template <class Attr>
Attr* launch_attrs(Call& c, unsigned& n) {
  Picker& pk = c.pk;
  n = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.in.ConsumeIntegralInRange(0u, 3u);
  Attr* a = c.objects<Attr>(n ? n : 1);
  for (unsigned i = 0; i < n; ++i) {
    unsigned char b[sizeof val(a[i])];
    for (auto& x : b) x = pk.in.ConsumeIntegral<unsigned char>();
    std::memcpy(&val(a[i]), b, sizeof b);
    int id = pk.in.ConsumeIntegralInRange(0, 15);
    a[i].id = static_cast<decltype(a[i].id)>(id == 15 ? pk.in.ConsumeIntegral<int>() : id);
    if (id == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE) std::memset(&val(a[i]), 0, sizeof b);  // an output
  }
  return a;
}

void blob64(Call& c, void* out) {
  std::vector<unsigned char> b = c.pk.blob();
  std::memcpy(out, b.data(), 64);
}

template <class Props>
void pool_props(Call& c, Props& v) {
  Picker& pk = c.pk;
  auto& in = pk.in;
  v.allocType = static_cast<decltype(v.allocType)>(in.ConsumeIntegralInRange(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 3));
  v.handleTypes = static_cast<decltype(v.handleTypes)>(pk.handle_types());
  CUmemLocation l = pk.location();
  v.location.type = static_cast<decltype(v.location.type)>(l.type);
  v.location.id = l.id;
  v.maxSize = in.ConsumeBool() ? 0 : pk.size();
  v.usage = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned short>();
  if (!in.ConsumeIntegralInRange(0, 7)) v.reserved[in.ConsumeIntegralInRange(0, 53)] = 1;
}

template <class Desc>
void access_desc(Call& c, Desc& v) {
  CUmemLocation l = c.pk.location();
  v.location.type = static_cast<decltype(v.location.type)>(l.type);
  v.location.id = l.id;
  v.flags = static_cast<decltype(v.flags)>(c.pk.in.ConsumeIntegralInRange(0, 7) ? c.pk.in.ConsumeIntegralInRange(0, 3)
                                                                                 : c.pk.in.ConsumeIntegral<int>());
}

// The runtime's pitched pointers may be host or device memory (by kind or by address).
cudaPitchedPtr pitched(Call& c) {
  Picker& pk = c.pk;
  cudaPitchedPtr p{};
  p.ptr = pk.in.ConsumeIntegralInRange(0, 7) ? pk.uptr() : nullptr;
  p.pitch = pitch(pk);
  p.xsize = upto(pk, 4096);
  p.ysize = upto(pk, 256);
  return p;
}
cudaPos pos(Picker& pk) { return cudaPos{upto(pk, 4096), upto(pk, 64), upto(pk, 8)}; }
cudaExtent extent3(Picker& pk) { return cudaExtent{upto(pk, 4096), upto(pk, 256), upto(pk, 8)}; }
cudaArray_t rt_array(Picker& pk) { return reinterpret_cast<cudaArray_t>(pk.pick(S.arrays)); }

}  // namespace

void fill(Call& c, CUmemPoolProps& v) { pool_props(c, v); }
void fill(Call& c, cudaMemPoolProps& v) { pool_props(c, v); }
void fill(Call& c, CUmemAccessDesc& v) { access_desc(c, v); }
void fill(Call& c, cudaMemAccessDesc& v) { access_desc(c, v); }
void fill(Call& c, CUmemLocation& v) { v = c.pk.location(); }
void fill(Call& c, cudaMemLocation& v) {
  CUmemLocation l = c.pk.location();
  v.type = static_cast<cudaMemLocationType>(l.type);
  v.id = l.id;
}

void fill(Call& c, CUmemAllocationProp& v) {
  Picker& pk = c.pk;
  v.type = pk.in.ConsumeIntegralInRange(0, 7) ? CU_MEM_ALLOCATION_TYPE_PINNED
                                              : static_cast<CUmemAllocationType>(pk.in.ConsumeIntegral<int>());
  v.requestedHandleTypes = pk.handle_types();
  v.location = pk.location();
  if (!pk.in.ConsumeIntegralInRange(0, 7)) {
    v.allocFlags.compressionType = pk.in.ConsumeIntegral<unsigned char>();
    v.allocFlags.gpuDirectRDMACapable = pk.in.ConsumeIntegral<unsigned char>();
    v.allocFlags.usage = pk.in.ConsumeIntegral<unsigned short>();
  }
}

void fill(Call& c, CUDA_MEMCPY2D& v) {
  Picker& pk = c.pk;
  Side s = side(c), d = side(c);
  v.srcMemoryType = s.type, v.srcHost = s.host, v.srcDevice = s.dev, v.srcArray = s.array;
  v.dstMemoryType = d.type, v.dstHost = const_cast<void*>(d.host), v.dstDevice = d.dev, v.dstArray = d.array;
  v.srcXInBytes = upto(pk, 4096), v.srcY = upto(pk, 64), v.srcPitch = pitch(pk);
  v.dstXInBytes = upto(pk, 4096), v.dstY = upto(pk, 64), v.dstPitch = pitch(pk);
  v.WidthInBytes = upto(pk, 4096), v.Height = upto(pk, 256);
}

void fill(Call& c, CUDA_MEMCPY3D& v) {
  Picker& pk = c.pk;
  Side s = side(c), d = side(c);
  v.srcMemoryType = s.type, v.srcHost = s.host, v.srcDevice = s.dev, v.srcArray = s.array;
  v.dstMemoryType = d.type, v.dstHost = const_cast<void*>(d.host), v.dstDevice = d.dev, v.dstArray = d.array;
  v.srcXInBytes = upto(pk, 4096), v.srcY = upto(pk, 64), v.srcZ = upto(pk, 8), v.srcPitch = pitch(pk);
  v.srcHeight = upto(pk, 256), v.srcLOD = pk.in.ConsumeIntegralInRange(0, 15) ? 0 : 1;
  v.dstXInBytes = upto(pk, 4096), v.dstY = upto(pk, 64), v.dstZ = upto(pk, 8), v.dstPitch = pitch(pk);
  v.dstHeight = upto(pk, 256), v.dstLOD = pk.in.ConsumeIntegralInRange(0, 15) ? 0 : 1;
  v.WidthInBytes = upto(pk, 4096), v.Height = upto(pk, 256), v.Depth = upto(pk, 8);
  if (!pk.in.ConsumeIntegralInRange(0, 15)) v.reserved0 = reinterpret_cast<void*>(uintptr_t{1});  // must be NULL: checked, never read
}

void fill(Call& c, CUDA_MEMCPY3D_PEER& v) {
  Picker& pk = c.pk;
  Side s = side(c), d = side(c);
  v.srcMemoryType = s.type, v.srcHost = s.host, v.srcDevice = s.dev, v.srcArray = s.array;
  v.dstMemoryType = d.type, v.dstHost = const_cast<void*>(d.host), v.dstDevice = d.dev, v.dstArray = d.array;
  v.srcContext = pk.context(), v.dstContext = pk.context();
  v.srcXInBytes = upto(pk, 4096), v.srcY = upto(pk, 64), v.srcZ = upto(pk, 8), v.srcPitch = pitch(pk);
  v.srcHeight = upto(pk, 256);
  v.dstXInBytes = upto(pk, 4096), v.dstY = upto(pk, 64), v.dstZ = upto(pk, 8), v.dstPitch = pitch(pk);
  v.dstHeight = upto(pk, 256);
  v.WidthInBytes = upto(pk, 4096), v.Height = upto(pk, 256), v.Depth = upto(pk, 8);
}

void fill(Call& c, cudaMemcpy3DParms& v) {
  Picker& pk = c.pk;
  if (pk.in.ConsumeBool()) v.srcArray = rt_array(pk);
  else v.srcPtr = pitched(c);
  if (pk.in.ConsumeBool()) v.dstArray = rt_array(pk);
  else v.dstPtr = pitched(c);
  v.srcPos = pos(pk), v.dstPos = pos(pk), v.extent = extent3(pk);
  v.kind = static_cast<cudaMemcpyKind>(pk.in.ConsumeIntegralInRange(0, 7) ? pk.in.ConsumeIntegralInRange(0, 4)
                                                                          : pk.in.ConsumeIntegral<int>());
}

void fill(Call& c, cudaMemcpy3DPeerParms& v) {
  Picker& pk = c.pk;
  if (pk.in.ConsumeBool()) v.srcArray = rt_array(pk);
  else v.srcPtr = pitched(c);
  if (pk.in.ConsumeBool()) v.dstArray = rt_array(pk);
  else v.dstPtr = pitched(c);
  v.srcPos = pos(pk), v.dstPos = pos(pk), v.extent = extent3(pk);
  v.srcDevice = pk.device(), v.dstDevice = pk.device();
}

void fill(Call& c, CUDA_EXTERNAL_MEMORY_BUFFER_DESC& v) {
  Picker& pk = c.pk;
  v.offset = pk.in.ConsumeBool() ? 0 : pk.size();
  v.size = pk.in.ConsumeBool() ? 4096 : pk.size();
  v.flags = pk.in.ConsumeIntegralInRange(0, 7) ? 0 : pk.in.ConsumeIntegral<unsigned>();
  if (!pk.in.ConsumeIntegralInRange(0, 15)) v.reserved[pk.in.ConsumeIntegralInRange(0, 15)] = 1;
}

void fill(Call& c, cudaExternalMemoryBufferDesc& v) {
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC d{};
  fill(c, d);
  v.offset = d.offset, v.size = d.size, v.flags = d.flags;
  std::memcpy(v.reserved, d.reserved, sizeof v.reserved);
}

// A small array descriptor: mostly valid formats and channel counts, sometimes anything.
void fill(Call& c, CUDA_ARRAY3D_DESCRIPTOR& v) {
  Picker& pk = c.pk;
  static const unsigned kFormats[] = {0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x10, 0x20, 0xb0, 0xc2, 0x50, 0x91};
  v.Width = upto(pk, 64), v.Height = upto(pk, 64), v.Depth = upto(pk, 4);
  v.Format = static_cast<CUarray_format>(pk.in.ConsumeIntegralInRange(0, 7) ? kFormats[pk.in.ConsumeIntegralInRange(0, 11)]
                                                                          : pk.in.ConsumeIntegral<unsigned>());
  v.NumChannels = pk.in.ConsumeIntegralInRange(0, 7) ? 1u << pk.in.ConsumeIntegralInRange(0, 2) : pk.in.ConsumeIntegral<unsigned>();
  v.Flags = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.flags();
}

void fill(Call& c, CUDA_ARRAY_DESCRIPTOR& v) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  fill(c, d);
  v.Width = d.Width, v.Height = d.Height, v.Format = d.Format, v.NumChannels = d.NumChannels;
}

void fill(Call& c, cudaChannelFormatDesc& v) {
  Picker& pk = c.pk;
  auto bits = [&] { return pk.in.ConsumeIntegralInRange(0, 3) ? 8 * pk.in.ConsumeIntegralInRange(0, 4) : pk.in.ConsumeIntegral<int>(); };
  v.x = bits(), v.y = bits(), v.z = bits(), v.w = bits();
  v.f = static_cast<cudaChannelFormatKind>(pk.in.ConsumeIntegralInRange(0, 7) ? pk.in.ConsumeIntegralInRange(0, 3)
                                                                             : pk.in.ConsumeIntegralInRange(0, 40));
}

// A texture's resource: mostly an array the program made, sometimes device memory, sometimes anything.
void fill(Call& c, CUDA_RESOURCE_DESC& v) {
  Picker& pk = c.pk;
  const int k = pk.in.ConsumeIntegralInRange(0, 7);
  v.resType = static_cast<CUresourcetype>(k < 4 ? 0 : k < 6 ? 2 : k == 6 ? 3 : pk.in.ConsumeIntegral<int>());
  if (v.resType == CU_RESOURCE_TYPE_ARRAY) {
    v.res.array.hArray = pk.pick(S.arrays);
  } else if (v.resType == CU_RESOURCE_TYPE_LINEAR || v.resType == CU_RESOURCE_TYPE_PITCH2D) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    fill(c, d);
    v.res.pitch2D.devPtr = pk.dptr();
    v.res.pitch2D.format = d.Format, v.res.pitch2D.numChannels = d.NumChannels;
    v.res.pitch2D.width = d.Width, v.res.pitch2D.height = d.Height, v.res.pitch2D.pitchInBytes = upto(pk, 512);
  }
  if (!pk.in.ConsumeIntegralInRange(0, 15)) v.flags = pk.flags();
}

void fill(Call& c, CUDA_TEXTURE_DESC& v) {
  Picker& pk = c.pk;
  for (auto& a : v.addressMode) a = static_cast<CUaddress_mode>(pk.in.ConsumeIntegralInRange(0, 4));
  v.filterMode = static_cast<CUfilter_mode>(pk.in.ConsumeIntegralInRange(0, 2));
  v.flags = pk.in.ConsumeIntegralInRange(0, 3) ? pk.in.ConsumeIntegralInRange(0u, 3u) : pk.flags();
}

void fill(Call& c, cudaResourceDesc& v) {
  CUDA_RESOURCE_DESC d{};
  fill(c, d);
  v.resType = static_cast<cudaResourceType>(d.resType);
  if (d.resType == CU_RESOURCE_TYPE_ARRAY) {
    v.res.array.array = reinterpret_cast<cudaArray_t>(d.res.array.hArray);
  } else {
    v.res.pitch2D.devPtr = reinterpret_cast<void*>(d.res.pitch2D.devPtr);
    fill(c, v.res.pitch2D.desc);
    v.res.pitch2D.width = d.res.pitch2D.width, v.res.pitch2D.height = d.res.pitch2D.height;
    v.res.pitch2D.pitchInBytes = d.res.pitch2D.pitchInBytes;
  }
}

void fill(Call& c, cudaTextureDesc& v) {
  Picker& pk = c.pk;
  for (auto& a : v.addressMode) a = static_cast<cudaTextureAddressMode>(pk.in.ConsumeIntegralInRange(0, 4));
  v.filterMode = static_cast<cudaTextureFilterMode>(pk.in.ConsumeIntegralInRange(0, 2));
  v.readMode = static_cast<cudaTextureReadMode>(pk.in.ConsumeIntegralInRange(0, 1));
  v.normalizedCoords = pk.in.ConsumeBool();
}

void fill(Call& c, CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC& v) {
  Picker& pk = c.pk;
  v.offset = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.size();
  fill(c, v.arrayDesc);
  v.numLevels = pk.in.ConsumeIntegralInRange(0, 7) ? pk.in.ConsumeIntegralInRange(1u, 4u) : pk.in.ConsumeIntegral<unsigned>();
  if (!pk.in.ConsumeIntegralInRange(0, 15)) v.reserved[0] = 1;
}

void fill(Call& c, cudaExternalMemoryMipmappedArrayDesc& v) {
  Picker& pk = c.pk;
  v.offset = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.size();
  auto bits = [&] { return pk.in.ConsumeIntegralInRange(0, 3) ? 8 * pk.in.ConsumeIntegralInRange(0, 4) : pk.in.ConsumeIntegral<int>(); };
  v.formatDesc.x = bits(), v.formatDesc.y = bits(), v.formatDesc.z = bits(), v.formatDesc.w = bits();
  v.formatDesc.f = static_cast<cudaChannelFormatKind>(pk.in.ConsumeIntegralInRange(0, 3));
  v.extent = cudaExtent{upto(pk, 64), upto(pk, 64), upto(pk, 4)};
  v.flags = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.flags();
  v.numLevels = pk.in.ConsumeIntegralInRange(0, 7) ? pk.in.ConsumeIntegralInRange(1u, 4u) : pk.in.ConsumeIntegral<unsigned>();
}

void fill(Call& c, CUlaunchConfig& v) {
  Picker& pk = c.pk;
  dim3 g, b;
  fill(c, g);
  fill(c, b);
  v.gridDimX = g.x, v.gridDimY = g.y, v.gridDimZ = g.z, v.blockDimX = b.x, v.blockDimY = b.y, v.blockDimZ = b.z;
  v.sharedMemBytes = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.in.ConsumeIntegralInRange(0u, 300000u);
  v.hStream = pk.stream();
  v.attrs = launch_attrs<CUlaunchAttribute>(c, v.numAttrs);
}

void fill(Call& c, cudaLaunchConfig_t& v) {
  Picker& pk = c.pk;
  fill(c, v.gridDim);
  fill(c, v.blockDim);
  v.dynamicSmemBytes = pk.in.ConsumeIntegralInRange(0, 3) ? 0 : pk.in.ConsumeIntegralInRange<size_t>(0, 300000);
  v.stream = pk.stream();
  v.attrs = launch_attrs<cudaLaunchAttribute>(c, v.numAttrs);
}

void fill(Call& c, CUlogicalEndpointProp& v) {
  Picker& pk = c.pk;
  auto& in = pk.in;
  int t = in.ConsumeIntegralInRange(0, 7);
  v.type = static_cast<CUlogicalEndpointType>(t < 4 ? 1 : t < 6 ? 2 : t == 6 ? 0 : in.ConsumeIntegral<int>());
  if (v.type == CU_LOGICAL_ENDPOINT_TYPE_MULTICAST)
    v.multicast.numDevices = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(1u, 2u) : in.ConsumeIntegral<unsigned>();
  else
    v.unicast.device = pk.device();
  static const unsigned long long kSizes[] = {uint64_t(2) << 20, uint64_t(4) << 20, 0, 1, uint64_t(1) << 40};
  v.size = in.ConsumeIntegralInRange(0, 7) ? kSizes[in.ConsumeIntegralInRange(0, 4)] : in.ConsumeIntegral<unsigned long long>();
  v.ipcHandleTypes = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(0u, 1u) : in.ConsumeIntegral<unsigned>();
  v.flags = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange(0u, 1u) : in.ConsumeIntegral<unsigned>();
}

void fill(Call& c, CUctxCreateParams& v) {
  Picker& pk = c.pk;
  switch (pk.in.ConsumeIntegralInRange(0, 7)) {
    case 0: {  // affinity asked for: parameters of the program's own
      v.execAffinityParams = c.objects<CUexecAffinityParam>(1);
      v.numExecAffinityParams = 1;
      break;
    }
    case 1: v.cigParams = c.objects<CUctxCigParam>(1); break;
    default: break;
  }
}

void fill(Call& c, CUmemPoolPtrExportData& v) { blob64(c, &v); }
void fill(Call& c, cudaMemPoolPtrExportData& v) { blob64(c, &v); }
void fill(Call& c, CUipcMemHandle& v) { blob64(c, &v); }
void fill(Call& c, CUipcEventHandle& v) { blob64(c, &v); }
void fill(Call& c, cudaIpcMemHandle_t& v) { blob64(c, &v); }
void fill(Call& c, cudaIpcEventHandle_t& v) { blob64(c, &v); }

void fill(Call& c, cudaPitchedPtr& v) {  // cudaMemset3D's: device memory, looked up
  Picker& pk = c.pk;
  size_t room = 0;
  v.ptr = reinterpret_cast<void*>(pk.dptr(&room));
  v.pitch = pk.in.ConsumeBool() ? pitch(pk) : pk.size();
  v.xsize = upto(pk, 4096);
  v.ysize = upto(pk, 256);
}

void fill(Call& c, cudaExtent& v) {
  Picker& pk = c.pk;
  v = pk.in.ConsumeIntegralInRange(0, 7) ? extent3(pk) : cudaExtent{pk.size(), pk.size(), pk.size()};
}

void fill(Call& c, dim3& v) {
  static const unsigned kDims[] = {1, 1, 1, 2, 4, 32, 256, 1024, 0, 1025, 65536};
  Picker& pk = c.pk;
  auto one = [&] {
    return pk.in.ConsumeIntegralInRange(0, 15) ? kDims[pk.in.ConsumeIntegralInRange(0, 10)] : pk.in.ConsumeIntegral<unsigned>();
  };
  v.x = one(), v.y = pk.in.ConsumeBool() ? 1 : one(), v.z = pk.in.ConsumeBool() ? 1 : one();
}

void fill(Call& c, CUgraphNode& v) { v = c.pk.pick(S.graph_nodes); }

}  // namespace fz
