// Memory objects that another process can hold without endangering their owner.
#pragma once
#include <cstddef>

namespace cuda_shim {

// A memfd of `size` bytes, mode 0600 (memfd_create makes it 0777), whose size is sealed
// (F_SEAL_SHRINK | F_SEAL_GROW, then F_SEAL_SEAL): a process handed the descriptor, or one
// reopening it through /proc/<pid>/fd, cannot truncate it under its owner's mappings (the owner
// would die of SIGBUS at its next access) nor add seals of its own. -1 with errno on failure.
int sealed_memfd(const char* name, size_t size) noexcept;

// Whether fd's size is sealed as sealed_memfd seals it: objects the emulator made are, a memfd
// that merely carries one of their names is not.
bool size_sealed(int fd) noexcept;

}  // namespace cuda_shim
