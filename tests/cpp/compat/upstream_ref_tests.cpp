// Upstreams by reference (issue #10, item 1): RMM 25.02 builds every sub-allocator and adaptor
// from a `device_async_resource_ref` as well as from a pointer, and `get_upstream_resource()`
// returns the reference. Written the way RMM's documentation and cuDF use them.
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/device/aligned_resource_adaptor.hpp>
#include <rmm/mr/device/arena_memory_resource.hpp>
#include <rmm/mr/device/binning_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/device/fixed_size_memory_resource.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/prefetch_resource_adaptor.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/device/tracking_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

using dmr                 = rmm::mr::device_memory_resource;
constexpr std::size_t MiB = std::size_t{1} << 20;

/// Allocates and frees through @p ref on a fresh stream and checks the alignment.
void round_trip(rmm::device_async_resource_ref ref, std::size_t bytes = 1000)
{
  rmm::cuda_stream stream;
  void* ptr = ref.allocate_async(bytes, stream.view());
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptr) % 256, 0U);
  ref.deallocate_async(ptr, bytes, stream.view());
  stream.synchronize();
}

TEST(UpstreamRef, PoolFromCurrentResourceRef)
{
  rmm::mr::pool_memory_resource<dmr> pool{
    rmm::mr::get_current_device_resource_ref(), 2 * MiB, 8 * MiB};
  EXPECT_EQ(pool.get_upstream_resource(), rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(pool.pool_size(), 2 * MiB);
  round_trip(pool);
}

TEST(UpstreamRef, PoolFromObjectReference)
{
  rmm::mr::cuda_memory_resource cuda;
  // RMM 25.02 also takes the upstream object itself.
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{cuda, 0};
  EXPECT_EQ(pool.get_upstream_resource(), rmm::device_async_resource_ref{cuda});
  EXPECT_EQ(pool.get_upstream(), &cuda);
  round_trip(pool);
}

TEST(UpstreamRef, PointerConstructorsStillWork)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 0};
  rmm::mr::statistics_resource_adaptor<decltype(pool)> stats{&pool};
  EXPECT_EQ(stats.get_upstream_resource(), rmm::device_async_resource_ref{pool});
  EXPECT_EQ(stats.get_upstream(), &pool);
  round_trip(stats);
  EXPECT_EQ(stats.get_allocations_counter().total, 1);
}

TEST(UpstreamRef, SubAllocatorsFromRef)
{
  auto upstream = rmm::mr::get_current_device_resource_ref();
  rmm::mr::arena_memory_resource<dmr> arena{upstream, 16 * MiB};
  EXPECT_EQ(arena.get_upstream_resource(), upstream);
  round_trip(arena);

  rmm::mr::fixed_size_memory_resource<dmr> fixed{upstream, 4096, 4};
  EXPECT_EQ(fixed.get_upstream_resource(), upstream);
  round_trip(fixed, 4096);

  rmm::mr::binning_memory_resource<dmr> binning{upstream, 10, 16};
  EXPECT_EQ(binning.get_upstream_resource(), upstream);
  round_trip(binning, 3000);
  round_trip(binning, 2 * MiB);  // past the largest bin: straight to the upstream
}

TEST(UpstreamRef, BinningAddBinTakesRef)
{
  auto upstream = rmm::mr::get_current_device_resource_ref();
  rmm::mr::binning_memory_resource<dmr> binning{upstream};
  rmm::mr::fixed_size_memory_resource<dmr> bin{upstream, 1024, 8};
  binning.add_bin(1024, rmm::device_async_resource_ref{bin});
  binning.add_bin(MiB);
  round_trip(binning, 1000);
  round_trip(binning, 100'000);
}

TEST(UpstreamRef, AdaptorsFromRef)
{
  rmm::mr::pool_memory_resource<dmr> pool{rmm::mr::get_current_device_resource_ref(), 4 * MiB};
  rmm::device_async_resource_ref pool_ref{pool};

  rmm::mr::statistics_resource_adaptor<dmr> stats{pool_ref};
  EXPECT_EQ(stats.get_upstream_resource(), pool_ref);
  round_trip(stats);
  EXPECT_EQ(stats.get_bytes_counter().total, 1008);  // 1000 through a reference: rounded to 16

  rmm::mr::tracking_resource_adaptor<dmr> tracking{pool_ref};
  EXPECT_EQ(tracking.get_upstream_resource(), pool_ref);
  round_trip(tracking);
  EXPECT_EQ(tracking.get_allocated_bytes(), 0U);

  rmm::mr::limiting_resource_adaptor<dmr> limiting{pool_ref, MiB};
  EXPECT_EQ(limiting.get_upstream_resource(), pool_ref);
  EXPECT_EQ(limiting.get_allocation_limit(), MiB);
  round_trip(limiting);
  EXPECT_THROW((void)limiting.allocate(2 * MiB), rmm::out_of_memory);

  rmm::mr::aligned_resource_adaptor<dmr> aligned{pool_ref, 4096};
  EXPECT_EQ(aligned.get_upstream_resource(), pool_ref);
  void* ptr = aligned.allocate(8192);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptr) % 4096, 0U);
  aligned.deallocate(ptr, 8192);

  rmm::mr::thread_safe_resource_adaptor<dmr> thread_safe{pool_ref};
  EXPECT_EQ(thread_safe.get_upstream_resource(), pool_ref);
  round_trip(thread_safe);

  rmm::mr::prefetch_resource_adaptor<dmr> prefetch{pool_ref};
  EXPECT_EQ(prefetch.get_upstream_resource(), pool_ref);
  round_trip(prefetch);
}

bool retry_once(std::size_t, void* arg)
{
  auto* calls = static_cast<int*>(arg);
  return ++*calls < 2;
}

TEST(UpstreamRef, FailureCallbackFromRef)
{
  rmm::mr::limiting_resource_adaptor<dmr> limited{rmm::mr::get_current_device_resource_ref(), MiB};
  int calls = 0;
  rmm::mr::failure_callback_resource_adaptor<dmr> mr{
    rmm::device_async_resource_ref{limited}, retry_once, &calls};
  EXPECT_EQ(mr.get_upstream_resource(), rmm::device_async_resource_ref{limited});
  round_trip(mr);
  EXPECT_THROW((void)mr.allocate(4 * MiB), rmm::out_of_memory);
  EXPECT_EQ(calls, 2);
}

/// A resource of the duck-typed kind (no base class), as a user or a test mock writes it.
class counting_host_backed_resource {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment = 256)
  {
    return allocate_async(bytes, alignment, rmm::cuda_stream_view{});
  }
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment = 256)
  {
    deallocate_async(ptr, bytes, alignment, rmm::cuda_stream_view{});
  }
  void* allocate_async(std::size_t bytes, std::size_t alignment, rmm::cuda_stream_view)
  {
    ++allocations;
    void* ptr = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (ptr == nullptr) { throw std::bad_alloc{}; }
    return ptr;
  }
  void deallocate_async(void* ptr, std::size_t, std::size_t, rmm::cuda_stream_view)
  {
    ++deallocations;
    std::free(ptr);
  }
  bool operator==(counting_host_backed_resource const& other) const { return this == &other; }
  bool operator!=(counting_host_backed_resource const& other) const { return this != &other; }

  int allocations{0};
  int deallocations{0};
};

TEST(UpstreamRef, DuckTypedUpstreamThroughRef)
{
  counting_host_backed_resource user;
  {
    rmm::mr::statistics_resource_adaptor<dmr> stats{rmm::device_async_resource_ref{user}};
    void* ptr = stats.allocate(512);
    stats.deallocate(ptr, 512);
    EXPECT_EQ(stats.get_upstream_resource(), rmm::device_async_resource_ref{user});
    EXPECT_EQ(stats.get_upstream(), nullptr);  // not a device_memory_resource
  }
  EXPECT_EQ(user.allocations, 1);
  EXPECT_EQ(user.deallocations, 1);
}

TEST(UpstreamRef, NullPointerUpstreamIsLogicError)
{
  EXPECT_THROW((rmm::mr::pool_memory_resource<dmr>{static_cast<dmr*>(nullptr), 0}),
               rmm::logic_error);
  EXPECT_THROW((rmm::mr::statistics_resource_adaptor<dmr>{static_cast<dmr*>(nullptr)}),
               rmm::logic_error);
}

TEST(UpstreamRef, PoolAsCurrentThroughRef)
{
  rmm::mr::pool_memory_resource<dmr> pool{rmm::mr::get_current_device_resource_ref(), 0};
  auto* previous = rmm::mr::set_current_device_resource(&pool);
  rmm::mr::statistics_resource_adaptor<dmr> stats{rmm::mr::get_current_device_resource_ref()};
  round_trip(stats);
  EXPECT_GT(pool.pool_size(), 0U);
  rmm::mr::set_current_device_resource(previous);
}

}  // namespace
