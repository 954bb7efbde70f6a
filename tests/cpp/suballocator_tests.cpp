// Per-class tests of the sub-allocators: pool, fixed_size, binning, arena.
#include "test_resources.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/device/arena_memory_resource.hpp>
#include <rmm/mr/device/binning_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/fixed_size_memory_resource.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using cuda_mr  = rmm::mr::cuda_memory_resource;
using pool_mr  = rmm::mr::pool_memory_resource<cuda_mr>;
using fixed_mr = rmm::mr::fixed_size_memory_resource<cuda_mr>;
using arena_mr = rmm::mr::arena_memory_resource<cuda_mr>;

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

static_assert(!std::is_copy_constructible_v<pool_mr>);
static_assert(!std::is_move_constructible_v<pool_mr>);
static_assert(!std::is_copy_assignable_v<fixed_mr>);
static_assert(!std::is_move_assignable_v<arena_mr>);
static_assert(std::is_base_of_v<rmm::mr::detail::handle_resource, pool_mr>);

bool contains(std::string const& haystack, std::string const& needle)
{
  return haystack.find(needle) != std::string::npos;
}

TEST(Pool, GrowsAndPoolSizeReflectsIt)
{
  cuda_mr upstream;
  pool_mr pool{&upstream, 0};
  EXPECT_EQ(pool.get_upstream(), &upstream);
  EXPECT_EQ(pool.get_upstream_resource(), &upstream);
  EXPECT_EQ(pool.pool_size(), 0U);
  EXPECT_EQ(pool.maximum_pool_size(), std::nullopt);
  EXPECT_EQ(pool.resource_name(), "pool_memory_resource");

  void* a = pool.allocate(MiB);
  EXPECT_GE(pool.pool_size(), MiB);
  auto const after_first = pool.pool_size();
  void* b                = pool.allocate(4 * MiB);
  EXPECT_GE(pool.pool_size(), after_first + 4 * MiB);
  pool.deallocate(a, MiB);
  pool.deallocate(b, 4 * MiB);
}

TEST(Pool, StatsAfterAllocations)
{
  cuda_mr upstream;
  pool_mr pool{&upstream, MiB, 8 * MiB};
  EXPECT_EQ(pool.pool_size(), MiB);
  EXPECT_EQ(pool.maximum_pool_size(), std::optional<std::size_t>{8 * MiB});
  EXPECT_EQ(pool.bytes_free(), MiB);
  EXPECT_EQ(pool.free_block_count(), 1U);
  EXPECT_EQ(pool.largest_free_block(), MiB);
  EXPECT_DOUBLE_EQ(pool.fragmentation(), 0.0);

  void* a = pool.allocate(256 * KiB);
  void* b = pool.allocate(256 * KiB);
  void* c = pool.allocate(256 * KiB);
  EXPECT_EQ(pool.bytes_free(), 256 * KiB);
  EXPECT_EQ(pool.largest_free_block(), 256 * KiB);

  pool.deallocate(b, 256 * KiB);  // a hole between a and c
  EXPECT_EQ(pool.bytes_free(), 512 * KiB);
  EXPECT_EQ(pool.free_block_count(), 2U);
  EXPECT_EQ(pool.largest_free_block(), 256 * KiB);
  EXPECT_DOUBLE_EQ(pool.fragmentation(), 0.5);
  auto const s = pool.stats();
  EXPECT_EQ(s.bytes_free, 512 * KiB);
  EXPECT_EQ(s.maximum_pool_size, 8 * MiB);

  pool.deallocate(a, 256 * KiB);
  pool.deallocate(c, 256 * KiB);
  EXPECT_EQ(pool.bytes_free(), MiB);
  EXPECT_EQ(pool.free_block_count(), 1U);
  EXPECT_DOUBLE_EQ(pool.fragmentation(), 0.0);
}

TEST(Pool, ReleaseReturnsFreeChunks)
{
  cuda_mr cuda;
  rmm_test::counting_resource counting{&cuda};
  rmm::mr::pool_memory_resource<rmm_test::counting_resource> pool{&counting, 0};
  void* a         = pool.allocate(2 * MiB);
  void* b         = pool.allocate(3 * MiB);
  auto const size = pool.pool_size();
  EXPECT_GE(size, 5 * MiB);
  EXPECT_EQ(counting.outstanding_bytes.load(), size);
  pool.deallocate(a, 2 * MiB);
  pool.deallocate(b, 3 * MiB);
  EXPECT_EQ(pool.release(), size);
  EXPECT_EQ(pool.pool_size(), 0U);
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
  EXPECT_EQ(pool.release(), 0U);
  // Still usable afterwards.
  void* c = pool.allocate(KiB);
  EXPECT_NE(c, nullptr);
  pool.deallocate(c, KiB);
}

TEST(Pool, MaximumExceededThrowsOutOfMemoryNamingTheRequest)
{
  cuda_mr upstream;
  pool_mr pool{&upstream, 0, 2 * MiB};
  void* a                   = pool.allocate(MiB);
  std::size_t const request = 3 * MiB;
  try {
    (void)pool.allocate(request);
    ADD_FAILURE() << "expected rmm::out_of_memory";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_TRUE(contains(e.what(), std::to_string(request))) << e.what();
  }
  EXPECT_THROW((void)pool.allocate(request), rmm::bad_alloc);
  EXPECT_LE(pool.pool_size(), 2 * MiB);
  pool.deallocate(a, MiB);
}

// As RMM's PoolTest.ForceGrowth: a pool over a limiting adaptor of 6000 bytes grows by
// max(request, pool size) without a maximum and by max(request, half the room left) with
// one, halving on the upstream's out-of-memory. The allocations are leaked on purpose:
// destroying the pool with them outstanding gives its chunks back cleanly.
TEST(Pool, ForceGrowthOverALimitingAdaptor)
{
  using any_pool_mr = rmm::mr::pool_memory_resource<rmm::mr::device_memory_resource>;
  using limiting_mr = rmm::mr::limiting_resource_adaptor<cuda_mr>;
  cuda_mr cuda;
  {
    limiting_mr limiter{&cuda, 6000};
    {
      any_pool_mr mr{&limiter, 0};
      EXPECT_NO_THROW((void)mr.allocate(1000));
      EXPECT_NO_THROW((void)mr.allocate(4000));
      EXPECT_NO_THROW((void)mr.allocate(500));
      EXPECT_THROW((void)mr.allocate(2000), rmm::out_of_memory);
    }
    EXPECT_EQ(limiter.get_allocated_bytes(), 0U);
  }
  {
    limiting_mr limiter{&cuda, 6000};
    {
      any_pool_mr mr{&limiter, 0, 8192};
      EXPECT_NO_THROW((void)mr.allocate(1000));
      EXPECT_THROW((void)mr.allocate(4000), rmm::out_of_memory);
      EXPECT_NO_THROW((void)mr.allocate(500));
      EXPECT_NO_THROW((void)mr.allocate(2000));
      EXPECT_EQ(mr.pool_size(), 4096U);
    }
    EXPECT_EQ(limiter.get_allocated_bytes(), 0U);
    void* p = limiter.allocate(5888);  // all of the limit (counted in 256-byte units)
    limiter.deallocate(p, 5888);
  }
}

TEST(Pool, NullUpstreamIsALogicError)
{
  try {
    pool_mr pool{nullptr, 0};
    ADD_FAILURE() << "expected rmm::logic_error";
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(e.what(), "Unexpected null upstream pointer.")) << e.what();
  }
  EXPECT_THROW((fixed_mr{nullptr}), rmm::logic_error);
  EXPECT_THROW((rmm::mr::binning_memory_resource<cuda_mr>{nullptr}), rmm::logic_error);
  EXPECT_THROW((arena_mr{nullptr, 256 * KiB}), rmm::logic_error);
}

TEST(Pool, MisalignedSizesAreLogicErrors)
{
  cuda_mr upstream;
  try {
    pool_mr pool{&upstream, 1000};
    ADD_FAILURE() << "expected rmm::logic_error";
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(e.what(), "1000")) << e.what();
  }
  try {
    pool_mr pool{&upstream, 0, std::size_t{1000}};
    ADD_FAILURE() << "expected rmm::logic_error";
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(e.what(), "1000")) << e.what();
  }
}

TEST(Pool, UserDefinedUpstreamIsCalled)
{
  cuda_mr cuda;
  rmm_test::counting_resource counting{&cuda};
  {
    rmm::mr::pool_memory_resource<rmm_test::counting_resource> pool{&counting, MiB};
    EXPECT_EQ(pool.get_upstream(), &counting);
    EXPECT_EQ(counting.allocations.load(), 1U);
    EXPECT_EQ(counting.outstanding_bytes.load(), MiB);
    std::vector<void*> small;
    for (int i = 0; i < 3; ++i) {
      small.push_back(pool.allocate(256 * KiB));
    }
    EXPECT_EQ(counting.allocations.load(), 1U) << "served from the initial pool";
    void* big = pool.allocate(2 * MiB);
    EXPECT_GE(counting.allocations.load(), 2U) << "the pool grew through the upstream";
    pool.deallocate(big, 2 * MiB);
    for (void* p : small) {
      pool.deallocate(p, 256 * KiB);
    }
  }
  EXPECT_EQ(counting.deallocations.load(), counting.allocations.load());
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
}

TEST(Pool, UpstreamOutOfMemorySurfaces)
{
  rmm_test::throwing_resource upstream{[] { throw rmm::out_of_memory{"upstream is empty"}; }};
  rmm::mr::pool_memory_resource<rmm_test::throwing_resource> pool{&upstream, 0};
  EXPECT_THROW((void)pool.allocate(MiB), rmm::out_of_memory);
}

TEST(FixedSize, BlockSizeAndOverBlockRequest)
{
  cuda_mr upstream;
  fixed_mr mr{&upstream};
  EXPECT_EQ(mr.get_block_size(), MiB);
  EXPECT_EQ(mr.get_upstream_resource(), &upstream);
  fixed_mr small{&upstream, 64 * KiB, 4};
  EXPECT_EQ(small.get_block_size(), 64 * KiB);
  std::vector<void*> ptrs;
  for (int i = 0; i < 10; ++i) {  // beyond the 4 preallocated blocks
    ptrs.push_back(small.allocate(64 * KiB));
  }
  EXPECT_THROW((void)small.allocate(64 * KiB + 1), rmm::bad_alloc);
  for (void* p : ptrs) {
    small.deallocate(p, 64 * KiB);
  }
}

TEST(FixedSize, BlockSizeRoundedUpTo256)
{
  cuda_mr upstream;
  fixed_mr mr{&upstream, 1000, 2};
  EXPECT_EQ(mr.get_block_size(), 1024U);
}

TEST(Binning, MinGreaterThanMaxIsALogicError)
{
  cuda_mr upstream;
  EXPECT_THROW((rmm::mr::binning_memory_resource<cuda_mr>{&upstream, 20, 10}), rmm::logic_error);
}

TEST(Binning, BinsAndUpstream)
{
  cuda_mr cuda;
  rmm_test::counting_resource counting{&cuda};
  rmm::mr::binning_memory_resource<rmm_test::counting_resource> mr{&counting, 10, 12};
  EXPECT_EQ(mr.get_upstream_resource(), &counting);
  auto const before = counting.allocations.load();
  void* big         = mr.allocate(MiB);  // no bin fits: straight to the upstream
  EXPECT_EQ(counting.allocations.load(), before + 1);
  mr.deallocate(big, MiB);
  void* small = mr.allocate(100);
  EXPECT_NE(small, nullptr);
  mr.deallocate(small, 100);
}

TEST(Binning, AddBinWithUserResource)
{
  cuda_mr cuda;
  rmm_test::counting_resource bin{&cuda};
  rmm::mr::binning_memory_resource<cuda_mr> mr{&cuda};
  mr.add_bin(64 * KiB, &bin);
  mr.add_bin(4 * KiB);  // a fixed_size bin over the upstream
  void* p = mr.allocate(32 * KiB);
  EXPECT_EQ(bin.allocations.load(), 1U) << "served by the user bin";
  mr.deallocate(p, 32 * KiB);
  EXPECT_EQ(bin.deallocations.load(), 1U);
  void* q = mr.allocate(KiB);
  EXPECT_EQ(bin.allocations.load(), 1U) << "served by the 4 KiB bin";
  mr.deallocate(q, KiB);
}

TEST(Arena, AllocatesAndReportsSizes)
{
  cuda_mr upstream;
  arena_mr mr{&upstream, 16 * MiB};
  EXPECT_EQ(mr.get_upstream_resource(), &upstream);
  EXPECT_EQ(mr.arena_size(), 16 * MiB);
  void* p = mr.allocate(MiB);
  EXPECT_NE(p, nullptr);
  mr.deallocate(p, MiB);
  EXPECT_THROW((arena_mr{&upstream, std::size_t{1000}}), rmm::logic_error);
}

TEST(Arena, DefaultSizeIsHalfOfFree)
{
  cuda_mr upstream;
  arena_mr mr{&upstream};
  EXPECT_GT(mr.arena_size(), 0U);
  void* p = mr.allocate(4 * KiB);
  mr.deallocate(p, 4 * KiB);
}

}  // namespace
