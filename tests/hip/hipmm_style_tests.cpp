// Code written for hipMM on AMD's platform: it keeps RMM's CUDA spelling (cudaStream_t,
// cudaSuccess, cudaGetDeviceCount, RMM_CUDA_TRY around runtime calls), which hipMM's headers
// turn into HIP's through rmm/cuda_runtime_api.h. Runs on the host runtime (RMM_RUNTIME=host);
// the calls that go to HIP's own library find no device here and must say so, not crash.
#include <rmm/cuda_runtime_api.h>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <type_traits>

// The names are HIP's, as hipMM's header makes them.
static_assert(std::is_same_v<cudaStream_t, hipStream_t>);
static_assert(std::is_same_v<cudaError_t, hipError_t>);
static_assert(std::is_same_v<cudaEvent_t, hipEvent_t>);
static_assert(std::is_same_v<cudaMemPool_t, hipMemPool_t>);
static_assert(std::is_same_v<rmm::detail::stream_type, hipStream_t>);
static_assert(CUDART_VERSION == 0, "hipMM's value: CUDA version checks take their oldest branch");
#if !defined(RMM_CUDA_TRY) || !defined(RMM_HAS_RUNTIME_ERROR_MACROS)
#error "the runtime error macros must be there on HIP"
#endif

TEST(HipmmStyle, CudaNamesAreHipValues)
{
  EXPECT_EQ(static_cast<int>(cudaSuccess), static_cast<int>(hipSuccess));
  EXPECT_EQ(static_cast<int>(cudaErrorMemoryAllocation),
            static_cast<int>(hipErrorMemoryAllocation));
  EXPECT_EQ(cudaStreamPerThread, hipStreamPerThread);
  EXPECT_EQ(cudaStreamLegacy, static_cast<hipStream_t>(nullptr));
  EXPECT_EQ(static_cast<int>(cudaMemcpyDefault), static_cast<int>(hipMemcpyDefault));
  EXPECT_EQ(cudaCpuDeviceId, hipCpuDeviceId);
  // RMM's prefetch tests ask where a range was last prefetched to.
  EXPECT_EQ(static_cast<int>(cudaMemRangeAttributeLastPrefetchLocation),
            static_cast<int>(hipMemRangeAttributeLastPrefetchLocation));
}

TEST(HipmmStyle, StreamConstantsAreHipHandles)
{
  // HIP's legacy default stream is its null stream (hipMM: cudaStreamLegacy is nullptr).
  EXPECT_EQ(rmm::cuda_stream_legacy.value(), cudaStreamLegacy);
  EXPECT_TRUE(rmm::cuda_stream_legacy.is_default());
  EXPECT_EQ(rmm::cuda_stream_per_thread.value(), cudaStreamPerThread);
  EXPECT_TRUE(rmm::cuda_stream_per_thread.is_per_thread_default());
  cudaStream_t raw = rmm::cuda_stream_default;  // the implicit conversion hipMM code uses
  EXPECT_EQ(raw, nullptr);
}

TEST(HipmmStyle, RuntimeCallsThroughCudaNames)
{
  int count           = -1;
  cudaError_t const e = cudaGetDeviceCount(&count);
  // No AMD GPU here: HIP's library reports that; with one, it counts it.
  EXPECT_TRUE(e == cudaSuccess || e == hipErrorNoDevice) << cudaGetErrorName(e);
  EXPECT_FALSE(std::string{cudaGetErrorString(cudaErrorInvalidValue)}.empty());
  if (e != cudaSuccess) {
    EXPECT_THROW(RMM_CUDA_TRY(cudaGetDeviceCount(&count)), rmm::cuda_error);
    (void)cudaGetLastError();
  }
}

TEST(HipmmStyle, ResourcesTakeCudaStreamT)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 1 << 20};
  cudaStream_t s = cudaStreamPerThread;
  void* p        = pool.allocate(1000, s);
  ASSERT_NE(p, nullptr);
  pool.deallocate(p, 1000, s);
  EXPECT_THROW((void)pool.allocate(std::size_t{1} << 62, s), rmm::out_of_memory);

  rmm::cuda_stream owned;
  cudaStream_t const raw = owned.value();
  rmm::device_buffer buf(4096, raw, &pool);
  EXPECT_EQ(buf.size(), 4096U);
  EXPECT_EQ(buf.stream().value(), raw);
  owned.synchronize();
}

TEST(HipmmStyle, CurrentDeviceResource)
{
  rmm::mr::cuda_memory_resource cuda;
  auto* previous = rmm::mr::set_current_device_resource(&cuda);
  rmm::device_buffer buf(256, rmm::cuda_stream_view{cudaStreamLegacy});
  EXPECT_EQ(buf.size(), 256U);
  rmm::mr::set_current_device_resource(previous);
}
