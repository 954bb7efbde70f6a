// rmm/cuda_runtime_api.h (hipMM's header) with CUDA's headers: CUDA's own names and values,
// nothing redefined. Built by tests/cccl, which has CUDA's headers; tests/hip covers HIP.
#include <rmm/cuda_runtime_api.h>
#include <rmm/cuda_stream_view.hpp>

#include <gtest/gtest.h>

#include <type_traits>

static_assert(CUDART_VERSION >= 11000, "CUDA's own version, not HIP's 0");
static_assert(std::is_same_v<rmm::detail::stream_type, cudaStream_t>);
#if defined(RMM_DETAIL_RUNTIME_HIP)
#error "HIP picked with CUDA's headers and no HIP platform"
#endif

TEST(CudaRuntimeApi, CudaNamesAreCudas)
{
  EXPECT_EQ(rmm::cuda_stream_legacy.value(), cudaStreamLegacy);
  EXPECT_EQ(rmm::cuda_stream_per_thread.value(), cudaStreamPerThread);
  EXPECT_EQ(static_cast<int>(cudaSuccess), 0);
}
