// Thrust integration: thrust_allocator, device_vector, exec_policy(_nosync), and (with CCCL)
// the cuda::mr concepts. Built twice when possible: as C++ with Thrust's CPP device system
// over the host runtime (CI, Debian's libthrust-dev), and as CUDA with nvcc (GPU machine).
#include <rmm/cuda_stream.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thrust_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#if !defined(RMM_DETAIL_HAVE_THRUST)
#error "thrust_tests.cpp is built only where rmm's Thrust headers are available"
#endif

#include <thrust/copy.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

namespace {

using stats_mr = rmm::mr::statistics_resource_adaptor<rmm::mr::cuda_memory_resource>;

/// Sets a resource as the current device resource for one test, then restores the previous.
class current_resource_guard {
 public:
  explicit current_resource_guard(rmm::mr::device_memory_resource* mr)
    : previous_{rmm::mr::set_current_device_resource(mr)}
  {
  }
  current_resource_guard(current_resource_guard const&)            = delete;
  current_resource_guard& operator=(current_resource_guard const&) = delete;
  ~current_resource_guard() { rmm::mr::set_current_device_resource(previous_); }

 private:
  rmm::mr::device_memory_resource* previous_;
};

TEST(ThrustAllocator, AllocatesFromTheGivenResourceOnTheGivenStream)
{
  rmm::mr::cuda_memory_resource cuda;
  stats_mr stats{&cuda};
  rmm::cuda_stream stream;
  rmm::mr::thrust_allocator<int> alloc{stream.view(), &stats};
  EXPECT_EQ(alloc.stream(), stream.view());
  EXPECT_EQ(alloc.get_upstream_resource(), rmm::device_async_resource_ref{stats});
  EXPECT_EQ(alloc.device(), rmm::get_current_cuda_device());

  auto ptr = alloc.allocate(100);
  EXPECT_NE(thrust::raw_pointer_cast(ptr), nullptr);
  EXPECT_EQ(stats.get_bytes_counter().value, 100 * static_cast<std::int64_t>(sizeof(int)));
  alloc.deallocate(ptr, 100);
  EXPECT_EQ(stats.get_bytes_counter().value, 0);
  EXPECT_EQ(stats.get_allocations_counter().total, 1);
}

TEST(ThrustAllocator, AcceptsAResourceRef)
{
  rmm::mr::cuda_memory_resource cuda;
  stats_mr stats{&cuda};
  rmm::device_async_resource_ref ref{stats};
  rmm::mr::thrust_allocator<double> alloc{rmm::cuda_stream_view{}, ref};
  auto ptr = alloc.allocate(3);
  // 24 bytes through the reference, which rounds up to 16 as in RMM.
  EXPECT_EQ(stats.get_bytes_counter().value, 32);
  alloc.deallocate(ptr, 3);
  EXPECT_EQ(stats.get_bytes_counter().value, 0);
}

TEST(ThrustAllocator, RebindAndConversionKeepStreamResourceAndDevice)
{
  static_assert(std::is_same_v<rmm::mr::thrust_allocator<int>::rebind<float>::other,
                               rmm::mr::thrust_allocator<float>>);
  rmm::mr::cuda_memory_resource cuda;
  rmm::cuda_stream stream;
  rmm::mr::thrust_allocator<int> ints{stream.view(), &cuda};
  rmm::mr::thrust_allocator<float> floats{ints};
  EXPECT_EQ(floats.stream(), ints.stream());
  EXPECT_EQ(floats.get_upstream_resource(), ints.get_upstream_resource());
  EXPECT_EQ(floats.device(), ints.device());

  rmm::mr::thrust_allocator<int> same{stream.view(), &cuda};
  rmm::mr::thrust_allocator<int> other_stream{rmm::cuda_stream_view{}, &cuda};
  EXPECT_TRUE(ints == same);
  EXPECT_TRUE(ints != other_stream);
}

TEST(ThrustAllocator, DefaultUsesTheCurrentDeviceResource)
{
  rmm::mr::cuda_memory_resource cuda;
  stats_mr stats{&cuda};
  current_resource_guard const guard{&stats};
  rmm::mr::thrust_allocator<int> alloc;
  EXPECT_EQ(alloc.get_upstream_resource(), rmm::device_async_resource_ref{stats});
  EXPECT_EQ(alloc.stream(), rmm::cuda_stream_view{});
  alloc.deallocate(alloc.allocate(8), 8);
  EXPECT_EQ(stats.get_allocations_counter().total, 1);
}

TEST(DeviceVector, AllocatesFromTheCurrentResourceAndComputes)
{
  rmm::mr::cuda_memory_resource cuda;
  stats_mr stats{&cuda};
  current_resource_guard const guard{&stats};
  {
    rmm::device_vector<int> vec(1000);
    EXPECT_EQ(stats.get_bytes_counter().value, 1000 * static_cast<std::int64_t>(sizeof(int)));
    thrust::sequence(vec.begin(), vec.end());
    EXPECT_EQ(thrust::reduce(vec.begin(), vec.end()), 499500);
    thrust::host_vector<int> host = vec;
    EXPECT_EQ(host[0], 0);
    EXPECT_EQ(host[999], 999);
    rmm::device_vector<int> copy = vec;
    EXPECT_EQ(stats.get_allocations_counter().value, 2);
  }
  EXPECT_EQ(stats.get_bytes_counter().value, 0);
}

TEST(ExecPolicy, SortsOnAStreamWithTemporariesFromTheGivenResource)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 1U << 24};
  rmm::mr::statistics_resource_adaptor<decltype(pool)> stats{&pool};
  rmm::cuda_stream stream;
  constexpr int n = 100000;
  rmm::device_vector<int> vec(n);
  thrust::sequence(rmm::exec_policy(stream.view()), vec.begin(), vec.end(), n, -1);
  auto const before = stats.get_allocations_counter().total;
  thrust::sort(rmm::exec_policy(stream.view(), &stats), vec.begin(), vec.end());
  EXPECT_GT(stats.get_allocations_counter().total, before) << "sort took no temporary memory";
  EXPECT_EQ(stats.get_bytes_counter().value, 0) << "temporaries not returned";
  stream.synchronize();
  thrust::host_vector<int> host = vec;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(host[static_cast<std::size_t>(i)], i + 1) << "at " << i;
  }
}

TEST(ExecPolicy, NosyncAndDefaultsCompute)
{
  rmm::device_vector<long> vec(4096);
  rmm::cuda_stream stream;
  thrust::sequence(rmm::exec_policy_nosync(stream.view()), vec.begin(), vec.end());
  EXPECT_EQ(thrust::reduce(rmm::exec_policy_nosync(stream.view()), vec.begin(), vec.end()),
            4096L * 4095L / 2L);
  EXPECT_EQ(thrust::reduce(rmm::exec_policy{}, vec.begin(), vec.end()), 4096L * 4095L / 2L);
  rmm::device_async_resource_ref ref = rmm::mr::get_current_device_resource_ref();
  EXPECT_EQ(thrust::reduce(rmm::exec_policy(rmm::cuda_stream_default, ref), vec.begin(), vec.end()),
            4096L * 4095L / 2L);
}

#if defined(RMM_HAS_CUDA_MR)
// CCCL 3.1 renamed the concepts: `resource` is stream-ordered, `synchronous_resource` is not.
#if CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1)
template <class R, class... P>
inline constexpr bool is_async_resource_with = ::cuda::mr::resource_with<R, P...>;
template <class R, class... P>
inline constexpr bool is_sync_resource_with = ::cuda::mr::synchronous_resource_with<R, P...>;
template <class R>
void* allocate_on(R& res, ::cuda::stream_ref stream, std::size_t bytes)
{
  return res.allocate(stream, bytes, 256);
}
template <class R>
void deallocate_on(R& res, ::cuda::stream_ref stream, void* ptr, std::size_t bytes)
{
  res.deallocate(stream, ptr, bytes, 256);
}
#else
template <class R, class... P>
inline constexpr bool is_async_resource_with = ::cuda::mr::async_resource_with<R, P...>;
template <class R, class... P>
inline constexpr bool is_sync_resource_with = ::cuda::mr::resource_with<R, P...>;
template <class R>
void* allocate_on(R& res, ::cuda::stream_ref stream, std::size_t bytes)
{
  return res.allocate_async(bytes, 256, stream);
}
template <class R>
void deallocate_on(R& res, ::cuda::stream_ref stream, void* ptr, std::size_t bytes)
{
  res.deallocate_async(ptr, bytes, 256, stream);
}
#endif

static_assert(
  is_async_resource_with<rmm::device_async_resource_ref, ::cuda::mr::device_accessible>);
static_assert(is_sync_resource_with<rmm::device_resource_ref, ::cuda::mr::device_accessible>);
static_assert(is_sync_resource_with<rmm::host_resource_ref, ::cuda::mr::host_accessible>);
static_assert(!is_sync_resource_with<rmm::host_resource_ref, ::cuda::mr::device_accessible>);
static_assert(is_async_resource_with<rmm::host_device_async_resource_ref,
                                     ::cuda::mr::host_accessible,
                                     ::cuda::mr::device_accessible>);
static_assert(::cuda::has_property<rmm::mr::thrust_allocator<int>, ::cuda::mr::device_accessible>);

TEST(CudaMr, ReferencesWorkThroughTheConceptInterface)
{
  rmm::mr::cuda_memory_resource cuda;
  stats_mr stats{&cuda};
  rmm::device_async_resource_ref ref{stats};
  rmm::cuda_stream stream;
  ::cuda::stream_ref const sref = stream.view();
  EXPECT_EQ(rmm::cuda_stream_view{sref}, stream.view());
  void* ptr = allocate_on(ref, sref, 1000);
  // Asked with alignment 256, the resource sees 1000 rounded up to it, as in RMM.
  EXPECT_EQ(stats.get_bytes_counter().value, 1024);
  deallocate_on(ref, sref, ptr, 1000);
  EXPECT_EQ(stats.get_bytes_counter().value, 0);
}
#endif

}  // namespace
