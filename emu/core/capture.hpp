// Stream capture, as the rooms that queue stream operations see it. While a stream takes part in
// a capture sequence (cuStreamBeginCapture), an operation given to it is not queued: its room
// describes it as a graph node (a Spec: what it is, and how to issue the same operation on a
// stream when the graph is launched) and hands it to the sequence. The sequence itself, and the
// graphs it builds, belong to the graph room (emu/graph), which implements Sequence: the rooms
// below reach it only through this interface, so no include runs up.
#pragma once
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/errc.hpp"

namespace cuda_shim {
class Stream;
class Context;

namespace cap {

// CUgraphNodeType's values.
enum class Kind : int {
  kernel = 0, memcpy = 1, memset = 2, host = 3, graph = 4, empty = 5, wait_event = 6, event_record = 7,
  ext_sem_signal = 8, ext_sem_wait = 9, mem_alloc = 10, mem_free = 11, batch_mem_op = 12, conditional = 13,
};

// One node's work. `issue` queues it on a stream, with the same checks as the call it stands for
// (a graph launch issues its nodes in a topological order on the launch stream); the rest is
// what the node's GetParams calls and the dot print report.
struct Spec {
  Kind kind = Kind::empty;
  std::function<Errc(CUstream stream)> issue;
  std::function<Errc()> precheck;     // optional: may the graph be launched now? (before anything is issued)
  std::string label;                  // the kernel's name; the dot print's node text
  CUDA_KERNEL_NODE_PARAMS kernel{};   // kernelParams points into `keep`
  const void* rt_func = nullptr;      // the runtime's kernel stub, for cudaGraphKernelNodeGetParams
  CUDA_MEMCPY3D copy{};
  CUDA_MEMSET_NODE_PARAMS fill{};
  CUDA_HOST_NODE_PARAMS host{};
  CUevent event = nullptr;
  CUDA_MEM_ALLOC_NODE_PARAMS alloc{};  // dptr and bytesize
  CUdeviceptr free_ptr = 0;
  // External-semaphore signal and wait nodes: the arrays (in `keep`) and their length.
  CUexternalSemaphore* sems = nullptr;
  const void* sem_params = nullptr;  // CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS or _WAIT_PARAMS
  unsigned sem_count = 0;
  CUcontext ctx = nullptr;
  std::shared_ptr<void> keep;          // storage the parameters point into, or the node's memory
};

enum class Mode : int { global = 0, thread_local_ = 1, relaxed = 2 };  // CUstreamCaptureMode

// A capture sequence (implemented by emu/graph). Node handles travel as opaque pointers.
class Sequence {
 public:
  virtual ~Sequence() = default;
  // A stream operation of s, captured after s's current dependencies; s's dependencies become it.
  virtual Errc add(Stream& s, Spec spec, const char* api) = 0;
  // A call the capture does not allow: the sequence is invalidated and the call answers `code`.
  virtual Errc refuse(Errc code, const char* api, const char* why) = 0;
  // s's current dependencies (what an event recorded on s now stands for).
  virtual std::vector<void*> deps(const Stream& s) = 0;
  // s waits for `deps` (cuStreamWaitEvent on an event recorded in this capture): s joins the
  // sequence if it was not in it, and its dependencies grow by them.
  virtual Errc join(Stream& s, const std::vector<void*>& deps, const char* api) = 0;
  virtual bool active() const = 0;
  virtual Mode mode() const = 0;
  virtual std::thread::id thread() const = 0;
  virtual const Context* context() const = 0;
  virtual bool origin_blocking() const = 0;
};

// How many sequences are open anywhere: with none, every check below is one load.
inline constinit std::atomic<int> g_open{0};

// The sequences open now (the graph room registers and unregisters them).
void opened(const std::shared_ptr<Sequence>& s);
void closed(const Sequence* s);

// Before an operation is queued on s: the sequence to capture it into (null: queue it), or the
// error of an operation the open captures forbid (the legacy stream's implicit synchronization
// with a capturing blocking stream: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, measured).
Errc intercept(Stream& s, const char* api, std::shared_ptr<Sequence>& seq);
// A synchronization or query of s (or of a context: every stream in it) while s captures:
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated (measured).
Errc refuse_if_capturing(Stream& s, const char* api);
Errc refuse_if_context_captures(const Context* ctx, const char* api);
// A "potentially unsafe" call (cuMemAlloc and the like) in this thread: refused with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while a capture of this thread that is not relaxed is
// open, or (the thread's mode being global) any global capture is; the capture is invalidated.
Errc check_unsafe(const char* api);

// This thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
Mode thread_mode();
void set_thread_mode(Mode m);

}  // namespace cap
}  // namespace cuda_shim
