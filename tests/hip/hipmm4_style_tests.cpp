// Code written for hipMM 4.0 (RMM 25.10's API on HIP) on AMD's platform, compiled as a 25.10
// translation unit (RMM_API_VERSION=2510 on this target): RMM's CUDA spelling of runtime names
// (cudaStream_t, cudaStreamNonBlocking, cudaMemHandleTypeNone, ...), which
// rmm/cuda_runtime_api.h turns into HIP's, used with 25.10's new names. Runs on the host
// runtime (RMM_RUNTIME=host).
#include <rmm/cuda_runtime_api.h>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#if RMM_API_GENERATION != 2510
#error "hipmm4_style_tests.cpp must be compiled with RMM_API_VERSION=2510"
#endif

static_assert(std::is_same_v<cudaStream_t, hipStream_t>);
static_assert(std::is_same_v<rmm::detail::stream_type, hipStream_t>);

TEST(Hipmm4Style, StreamFlagsAreHipFlags)
{
  EXPECT_EQ(static_cast<unsigned>(rmm::cuda_stream::flags::non_blocking),
            static_cast<unsigned>(cudaStreamNonBlocking));
  EXPECT_EQ(static_cast<unsigned>(rmm::cuda_stream::flags::sync_default),
            static_cast<unsigned>(cudaStreamDefault));
  rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
  cudaStream_t handle = stream.value();
  EXPECT_NE(handle, nullptr);
  rmm::cuda_stream_pool pool{2, rmm::cuda_stream::flags::non_blocking};
  EXPECT_EQ(pool.get_pool_size(), 2U);
  stream.synchronize();
}

// Names hipMM 4.0's own headers and tests use beyond hipMM 3.0's: the stream-flag query of its
// stream tests, the attribute its prefetch capability check reads, CUDA 13's location type.
static_assert(cudaDevAttrConcurrentManagedAccess == hipDeviceAttributeConcurrentManagedAccess);
static_assert(std::is_same_v<cudaMemLocation, hipMemLocation>);

TEST(Hipmm4Style, StreamGetFlagsIsHipStreamGetFlags)
{
  hipError_t (*get_flags)(hipStream_t, unsigned int*) = &cudaStreamGetFlags;
  EXPECT_EQ(get_flags, &hipStreamGetFlags);
}

TEST(Hipmm4Style, RuntimeCapabilitiesTakeHipHandleTypes)
{
  EXPECT_TRUE(rmm::detail::export_handle_type::is_supported(cudaMemHandleTypeNone));
  int device = 0;
  ASSERT_EQ(rmm_get_current_device(&device), RMM_STATUS_SUCCESS);
  int mask = 0;
  ASSERT_EQ(rmm_device_async_pool_handle_types(device, &mask), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm::detail::export_handle_type::is_supported(cudaMemHandleTypePosixFileDescriptor),
            (mask & static_cast<int>(cudaMemHandleTypePosixFileDescriptor)) != 0);
  // HIP and the host emulation have no hardware decompression engine.
  EXPECT_FALSE(rmm::detail::hwdecompress::is_supported());
  EXPECT_EQ(rmm::detail::runtime_async_alloc::is_supported(),
            rmm::detail::runtime_async_alloc::is_supported());
}

TEST(Hipmm4Style, UvectorReverseIteratorsOnHipStreams)
{
  rmm::cuda_stream stream;
  cudaStream_t raw = stream.value();
  rmm::device_uvector<float> vec(4, rmm::cuda_stream_view{raw});
  EXPECT_EQ(vec.rbegin().base(), vec.end());
  EXPECT_EQ(std::distance(vec.crbegin(), vec.crend()), 4);
}

TEST(Hipmm4Style, ResourcesTakeStreamFirstForms)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::cuda_stream stream;
  void* p = cuda.allocate(stream.view(), 1000);
  cuda.deallocate(stream.view(), p, 1000);
  rmm::device_async_resource_ref ref{cuda};
  p = ref.allocate_sync(64);
  ref.deallocate_sync(p, 64);
  p = ref.allocate(stream.view(), 64);
  ref.deallocate(stream.view(), p, 64);
  stream.synchronize();
}

TEST(Hipmm4Style, OutOfMemoryTextsNameTheSize)
{
  auto failing = []() { return cudaErrorMemoryAllocation; };
  try {
    RMM_CUDA_TRY_ALLOC(failing(), 4096);
    FAIL() << "no exception";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_NE(std::string{e.what()}.find("failed to allocate 4096 bytes"), std::string::npos)
      << e.what();
  }

  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 1 << 20, 1 << 20};
  try {
    void* p = pool.allocate(std::size_t{2} << 20);
    pool.deallocate(p, std::size_t{2} << 20);
    FAIL() << "no exception";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_NE(std::string{e.what()}.find("Maximum pool size exceeded (failed to allocate 2."),
              std::string::npos)
      << e.what();
  }
}

TEST(Hipmm4Style, RapidsLoggerNames)
{
  std::ostringstream out;
  rapids_logger::logger lg{"hip", {std::make_shared<rapids_logger::ostream_sink_mt>(out)}};
  lg.set_pattern("%l %v");
  lg.set_level(rapids_logger::level_enum::info);
  lg.info("hipMM %d", 4);
  lg.flush();
  EXPECT_EQ(out.str(), "info hipMM 4\n");
  static_assert(std::is_same_v<decltype(rmm::default_logger()), rapids_logger::logger&>);
}
