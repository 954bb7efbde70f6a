// RMM 26.08's names and behaviours (RMM_API_VERSION=2608, C++20, CCCL >= 3.4) on the host
// runtime: the ABI namespace macros, is_supported_base_resource_alignment and the base
// resources' alignment rule, device_uvector's size check, the failure-callback adaptor's
// alignment, zero bytes through the binning resource's bins, and the names 26.08 removed.
#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include "counting_resource.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>

#if RMM_API_GENERATION != 2608
#error "api_26_08_tests.cpp must be compiled with RMM_API_VERSION=2608"
#endif

#if defined(RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION) || !defined(RMM_MIN_HWDECOMPRESS_CUDA_VERSION)
#error \
  "RMM 26.08 renamed RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION to RMM_MIN_HWDECOMPRESS_CUDA_VERSION"
#endif

RMM_NAMESPACE_BEGIN
namespace test_extension {
inline int answer() { return 26; }
}  // namespace test_extension
RMM_NAMESPACE_END

namespace {

constexpr std::size_t over_aligned = rmm::CUDA_ALLOCATION_ALIGNMENT * 2;
struct alignas(over_aligned) over_aligned_value {
  int value;
};

TEST(Api2608Names, AbiNamespaceMacros)
{
  EXPECT_EQ(rmm::test_extension::answer(), 26);
  EXPECT_EQ(RMM_NAMESPACE::test_extension::answer(), 26);
  static_assert(std::is_same_v<rmm::api_26_08::device_buffer, rmm::device_buffer>);
}

TEST(Api2608Names, RemovedNamesAreGone)
{
  auto has_mempool_usage = []<typename T>(T*) {
    return requires { typename T::mempool_usage; };
  };
  EXPECT_FALSE(has_mempool_usage(static_cast<rmm::mr::cuda_async_memory_resource*>(nullptr)));
}

TEST(Api2608Alignment, SupportedBaseResourceAlignment)
{
  static_assert(rmm::is_supported_base_resource_alignment(1));
  static_assert(rmm::is_supported_base_resource_alignment(rmm::CUDA_ALLOCATION_ALIGNMENT));
  static_assert(!rmm::is_supported_base_resource_alignment(over_aligned));
  static_assert(!rmm::is_supported_base_resource_alignment(0));
  static_assert(!rmm::is_supported_base_resource_alignment(3));
}

TEST(Api2608Alignment, BaseResourcesRefuseOverAlignment)
{
  rmm::mr::cuda_memory_resource cuda;
  EXPECT_THROW(std::ignore = cuda.allocate_sync(100, over_aligned), rmm::bad_alloc);
  EXPECT_THROW(std::ignore = cuda.allocate(cuda::stream_ref{cudaStream_t{}}, 100, over_aligned),
               rmm::bad_alloc);
  EXPECT_EQ(cuda.allocate_sync(0), nullptr);
  void* p = cuda.allocate_sync(100, rmm::CUDA_ALLOCATION_ALIGNMENT);
  EXPECT_NE(p, nullptr);
  cuda.deallocate_sync(p, 100);
  rmm::mr::managed_memory_resource managed;
  EXPECT_THROW(std::ignore = managed.allocate_sync(100, over_aligned), rmm::bad_alloc);
}

TEST(Api2608Alignment, ContainersOverTheDefaultResource)
{
  rmm::cuda_stream_view const stream{};
  EXPECT_THROW(rmm::device_buffer(100, over_aligned, stream), rmm::bad_alloc);
  std::uint8_t host[100]{};
  EXPECT_THROW(rmm::device_buffer(host, sizeof(host), over_aligned, stream), rmm::bad_alloc);
  EXPECT_THROW(rmm::device_buffer(100, 3, stream), rmm::invalid_argument);
  EXPECT_THROW(std::ignore = rmm::device_uvector<over_aligned_value>(10, stream), rmm::bad_alloc);
  EXPECT_THROW(std::ignore = rmm::device_scalar<over_aligned_value>(stream), rmm::bad_alloc);
}

TEST(Api2608Uvector, OverflowingSizeIsAnInvalidArgument)
{
  rmm::cuda_stream_view const stream{};
  auto constexpr too_many = std::numeric_limits<std::size_t>::max() / sizeof(std::uint64_t) + 1;
  EXPECT_THROW(std::ignore = rmm::device_uvector<std::uint64_t>(too_many, stream),
               rmm::invalid_argument);
  rmm::device_uvector<std::uint64_t> vec(0, stream);
  EXPECT_THROW(vec.reserve(too_many, stream), rmm::invalid_argument);
  EXPECT_THROW(vec.resize(too_many, stream), rmm::invalid_argument);
}

bool never_retry(std::size_t, void*) { return false; }

TEST(Api2608FailureCallback, ForwardsTheAlignment)
{
  counting_resource upstream;
  rmm::mr::failure_callback_resource_adaptor<> mr{upstream, never_retry, nullptr};
  cuda::stream_ref const stream{cudaStream_t{}};
  void* p = mr.allocate(stream, 1024, over_aligned);
  EXPECT_EQ(upstream.counts->last_alignment.load(), over_aligned);
  EXPECT_EQ(upstream.counts->allocations.load(), 1);
  mr.deallocate(stream, p, 1024, over_aligned);
  EXPECT_EQ(upstream.counts->deallocations.load(), 1);
  void* q = mr.allocate_sync(512);
  EXPECT_EQ(upstream.counts->allocations.load(), 2);
  mr.deallocate_sync(q, 512);
  EXPECT_EQ(upstream.counts->outstanding_bytes.load(), 0U);
}

TEST(Api2608Binning, ZeroBytesReachTheSmallestBin)
{
  rmm::mr::cuda_memory_resource cuda;
  counting_resource bin;
  rmm::mr::binning_memory_resource mr{cuda};
  mr.add_bin(1024, rmm::device_async_resource_ref{bin});
  EXPECT_EQ(mr.allocate_sync(0), nullptr);
  EXPECT_EQ(bin.counts->allocations.load(), 1);
  EXPECT_EQ(bin.counts->last_bytes.load(), 0U);
  mr.deallocate_sync(nullptr, 0);
  EXPECT_EQ(bin.counts->deallocations.load(), 1);
}

}  // namespace
