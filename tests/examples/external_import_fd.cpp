// Importing memory another API exported as an opaque fd. Here the exporter is the driver itself
// (a cuMemCreate allocation exported with cuMemExportToShareableHandle); a Vulkan program's
// vkGetMemoryFdKHR fd imports the same way. A buffer mapped from the import shows the
// exporter's bytes. After an import, the fd belongs to the driver; a foreign fd is refused.
#include <cuda.h>
#include <cuda_shim_ext.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

static void show(const char* call, CUresult r) {
  const char* name = "?";
  cuGetErrorName(r, &name);
  std::printf("%s -> %s\n", call, name);
#ifdef CUDA_SHIM_EXT
  char why[512];
  if (r != CUDA_SUCCESS && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
#endif
}

int main() {
  CUcontext ctx;
  cuInit(0);
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);

  // The exporter: 2 MiB of device memory, mapped and filled with 42, exported as an fd.
  const size_t size = 2 << 20;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h;
  CUdeviceptr va;
  cuMemCreate(&h, size, &prop, 0);
  cuMemAddressReserve(&va, size, 0, 0, 0);
  cuMemMap(va, size, 0, h, 0);
  CUmemAccessDesc rw = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  cuMemSetAccess(va, size, &rw, 1);
  cuMemsetD32(va, 42, size / 4);
  int fd = -1;
  show("cuMemExportToShareableHandle", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));

  // The importer.
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc = {};
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd;
  desc.size = size;
  CUexternalMemory ext;
  show("cuImportExternalMemory", cuImportExternalMemory(&ext, &desc));
  std::printf("the fd after the import: %s\n", fcntl(fd, F_GETFD) == -1 ? "closed (the driver owns it)" : "open");

  CUDA_EXTERNAL_MEMORY_BUFFER_DESC buf = {};
  buf.offset = 4096;
  buf.size = size;  // the mistake: 4096 + 2 MiB runs past the end of the imported memory
  CUdeviceptr p;
  show("cuExternalMemoryGetMappedBuffer(offset 4096, 2 MiB)", cuExternalMemoryGetMappedBuffer(&p, ext, &buf));
  buf.size = 4096;
  show("cuExternalMemoryGetMappedBuffer(offset 4096, 4 KiB)", cuExternalMemoryGetMappedBuffer(&p, ext, &buf));
  unsigned int v = 0;
  cuMemcpyDtoH(&v, p, sizeof v);
  std::printf("the buffer reads %u, the exporter's value\n", v);
  show("cuMemFreeAsync(buffer)", cuMemFreeAsync(p, nullptr));
  show("cuMemFree(buffer)", cuMemFree(p));
  show("cuDestroyExternalMemory", cuDestroyExternalMemory(ext));

  // Any fd that no driver or Vulkan exported, e.g. a plain memfd, is refused. (Moved to fd 100 so
  // that the explanation, which names it, reads the same in every run.)
  int plain = memfd_create("not-an-export", 0);
  desc.handle.fd = fcntl(plain, F_DUPFD, 100);
  close(plain);
  if (ftruncate(desc.handle.fd, size) != 0) return 1;
  show("cuImportExternalMemory(a plain memfd)", cuImportExternalMemory(&ext, &desc));

  cuMemUnmap(va, size);
  cuMemAddressFree(va, size);
  cuMemRelease(h);
  cuDevicePrimaryCtxRelease(0);
  return 0;
}
