// Where this user's registry segment lives, so that no other user can take it first.
#pragma once
#include <string>

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

}  // namespace cuda_shim::ipc
