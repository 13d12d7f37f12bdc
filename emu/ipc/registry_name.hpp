// Where this user's registry segment lives, so that no other user can take it first.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace cuda_shim::ipc {

// `base` (cuda-shim-<uid> in /dev/shm, predictable) unless a file of that name belongs to
// another user, who could have created it first to break IPC for this one (issue 22: registry
// squatting). Then a name of this user's own, with 128 random bits, kept in `private_dir`
// (mode 0700, this user's) so that every process of the user finds the same one; a kept name
// that was squatted in turn is replaced. `why` says what happened when the result is not base.
std::string resolve_registry_name(const std::string& base, const std::string& private_dir, std::string& why);

// This user's private directory for it: $XDG_RUNTIME_DIR/cuda-shim, else ~/.cache/cuda-shim,
// made mode 0700; empty when neither is this user's alone.
std::string private_registry_dir();

// For `cuda-shim gc` (registry_gc.cpp). Whether this user's processes would use `name` as their
// registry: base, or a name of its own kept in a private directory (base-<32 hex digits>).
bool own_registry_name(const std::string& name, const std::string& base);
// "a directory", "a symbolic link", "a file" or "a special file", for gc's findings.
const char* file_type(mode_t m);
// The private directories a name may be kept in, whether they exist or not (never made here).
std::vector<std::string> private_registry_dirs();
// Checks private directory `dir` and what it holds, and removes what cannot be trusted: the
// directory when it is no directory, another user's (reported only), open to others (made 0700
// again, its kept name dropped), a kept name that is malformed or not this user's alone, files a
// dead process left half-written. One line per finding, "<path>: <what>; <what was done>".
std::string collect_private_dir(const std::string& dir, const std::string& base);

}  // namespace cuda_shim::ipc
