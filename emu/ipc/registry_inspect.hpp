// The shared registry as `cuda-shim smi` shows it (emu/inspect, tools/smi.cpp): read through a
// mapping that takes no process slot, so the inspector is never listed as a GPU process.
// Lines of "what key=value ...", values escaped (%20 for a space, %25 for %, %0a for a newline):
//   registry name=N                                  the segment
//   device ordinal=D name=N total=B used=B           each device of this process's configuration
//   proc pid=P start=S channel=C gone=0|1            each process slot (gone: exited or killed)
//   use pid=P dev=D bytes=B contexts=N               its device memory and contexts
//   export kind=legacy_mem|fabric|object pid=P token=T object=T size=B device=D what=pool|vmm|semaphore
//   event pid=P token=T state=live|orphan issued=N completed=N
//   endpoint index=I token=T type=N size=B owner=D creator=P exported=0|1 team=D,D,...
//   alias pid=P endpoint=I id=N imported=0|1
//   bind pid=P endpoint=I dev=D id=N kind=N offset=B size=B fabric=0|1 what=X
#pragma once
#include <string>

namespace cuda_shim::ipc {

// The lines above; empty, with why, when no registry segment can be read (no process uses the
// emulator, or it belongs to another layout).
std::string inspect_registry(std::string& why);

// `cuda-shim smi --reap`: takes the lock and reclaims what processes that exited or were killed
// left (their slot and device figures, exports, endpoint aliases and bindings; their IPC events
// become orphans, which still open, as on the driver). One line per process reclaimed:
//   reaped pid=P exports=N events=N aliases=N bindings=N bytes=B
std::string reap_registry(std::string& why);

// The escaping used above, for values written into such lines.
std::string inspect_escape(const std::string& v);

}  // namespace cuda_shim::ipc
