// Graph memory: the memory of allocation nodes (cuGraphAddMemAllocNode, cuMemAllocAsync in a
// stream capture) and the graph-memory attributes of a device. Measured on an H200
// (tests/probe/cases/graph.cases, graph.mem.*): the address is fixed when the node is made; the
// allocation is live from the launch that runs its node until a free node, cuMemFreeAsync or
// cuMemFree frees it; a graph whose allocation is still live cannot be launched again
// (CUDA_ERROR_INVALID_VALUE); the device's used graph memory counts what launched allocation nodes
// hold while their graphs exist, its reserved memory also what released graphs held, until
// cuDeviceGraphMemTrim.
#pragma once
#include <cuda.h>

#include <memory>

#include "core/capture.hpp"
#include "core/errc.hpp"

namespace cuda_shim {
class Context;
}

namespace cuda_shim::mem {

// An allocation node of p.bytesize bytes on p.poolProps.location's device (ctx's device when the
// location is unset); out.alloc.dptr is its address. The memory goes with the last Spec copy.
Errc graph_alloc_spec(const CUDA_MEM_ALLOC_NODE_PARAMS& p, const std::shared_ptr<Context>& ctx, cap::Spec& out,
                      const char* api);
// A free node of p: an allocation node's memory (explicit), or any stream-ordered allocation
// (captured: `captured` frees a non-graph allocation at launch with cuMemFreeAsync).
Errc graph_free_spec(CUdeviceptr p, bool captured, cap::Spec& out, const char* api);
bool is_graph_memory(CUdeviceptr p);
// A cuMemFree / cuMemFreeAsync of graph memory outside the graph: the allocation stops being live.
void graph_memory_freed(CUdeviceptr p);

}  // namespace cuda_shim::mem
