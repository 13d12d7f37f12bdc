#pragma once
#include <cstddef>

struct MacroValue {
    const char *name;
    long long value;
};
extern const MacroValue nvidia_macros[];
extern const std::size_t nvidia_macro_count;
extern const MacroValue shim_macros[];
extern const std::size_t shim_macro_count;
