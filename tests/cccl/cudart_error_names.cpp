// The two CUDA runtime functions that header-only error paths name (RMM's error macros,
// CCCL's error formatting), for test programs built without libcudart: tests/cccl compiles
// against CUDA's headers only and runs on rmm-rs's host runtime, where librmm loads no cudart.
// They give the enumerator's name and a short description, as cudart does.
#include <cuda_runtime_api.h>

namespace {
struct error_text {
  cudaError_t code;
  char const* name;
  char const* text;
};

// Only the codes the tests and headers meet; others get a generic text.
constexpr error_text known[] = {
  {cudaSuccess, "cudaSuccess", "no error"},
  {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
  {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
  {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
  {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
  {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
};

error_text const* find(cudaError_t code) noexcept
{
  for (auto const& entry : known) {
    if (entry.code == code) { return &entry; }
  }
  return nullptr;
}
}  // namespace

extern "C" char const* cudaGetErrorName(cudaError_t error)
{
  auto const* entry = find(error);
  return entry != nullptr ? entry->name : "cudaErrorUnknown";
}

extern "C" char const* cudaGetErrorString(cudaError_t error)
{
  auto const* entry = find(error);
  return entry != nullptr ? entry->text : "unrecognized error code";
}
