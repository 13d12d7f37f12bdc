// What NVIDIA's driver answered, read from the recorded probe runs (docs/probe.md): a test asks
// for the code of a named probe case (tests/probe/cases/*.cases) instead of writing the literal
// a second time. The data is tests/probe/recorded/nvidia.jsonl, with the GPU, driver and CUDA
// versions in its header. A case that is missing there, or that the recording machine skipped,
// throws, so the test asking for it fails and says which case to record.
#pragma once
#include <string>
#include <string_view>

namespace real {

// The code of the case's op K (0 is its first op line), or of its last op when K is -1.
int code(std::string_view case_name, int k = -1);
// Another field of that record, as text ("" when the record has none): an output's value.
std::string field(std::string_view case_name, int k, std::string_view key);
// The recording's header line (GPU, driver, CUDA version).
const std::string& header();

// code() typed as the caller's enum: CUresult for cu* ops, cudaError_t for rt_* ops.
template <class E>
E rc(std::string_view case_name, int k = -1) { return static_cast<E>(code(case_name, k)); }

}  // namespace real

// The usual spellings: REQUIRE_CU(cuX(...), real::cu("pool.create.bad_type")).
#define REAL_CU(name, ...) ::real::rc<CUresult>(name, ##__VA_ARGS__)
#define REAL_RT(name, ...) ::real::rc<cudaError_t>(name, ##__VA_ARGS__)
