// The live inspector's process side (`cuda-shim smi`, docs/smi.md). What a process holds only
// in itself (its pools' books, its live allocations, its VMM reservations and mappings) is read
// on request by one thread per process, started at cuInit: it waits on an abstract unix socket
// named from the user id and pid (inspector_socket_name), answers a connection of the same user
// (SO_PEERCRED) with one snapshot taken under the existing locks, and closes it. The API's calls
// never touch it: the thread costs nothing until someone asks. Detached, with every signal
// blocked, it never keeps the process alive and does nothing at exit; a fork()ed child closes
// the inherited socket and starts its own at its own cuInit. CUDA_SHIM_INSPECTOR=0 starts none.
#pragma once
#include <string>
#include <sys/types.h>

namespace cuda_shim::inspect {

// The abstract socket's name, without its leading NUL: "cuda-shim-smi.<uid>.<pid>".
std::string socket_name(uid_t uid, pid_t pid);

// This process's snapshot, lines of "what key=value ..." (values escaped as in
// ipc/registry_inspect.hpp):
//   process pid=P comm=C devices=N
//   alloc kind=device|host_pinned|host_registered|managed|ipc_opened|external dev=D count=N bytes=B largest=B
//   pool handle=H dev=D location=L type=pinned|managed handle_types=N token=T default= imported= exported=
//        destroyed= capacity= reserved= reserved_high= used= used_high= threshold= reuse_follow=
//        reuse_opportunistic= reuse_internal= allocations=N bytes=B largest=B pending=N
//   vmm handles=N reservations=N
//   reservation base=A size=B mappings=N
//   mapping base=A size=B reservation=A handle=H dev=D location=L token=T imported=0|1 access=WHO:rw,...
std::string snapshot();

}  // namespace cuda_shim::inspect
