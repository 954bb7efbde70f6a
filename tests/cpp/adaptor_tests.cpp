// Per-class tests of the resource adaptors and owning_wrapper.
#include "test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/aligned_resource_adaptor.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>
#include <rmm/mr/device/managed_memory_resource.hpp>
#include <rmm/mr/device/owning_wrapper.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/prefetch_resource_adaptor.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/device/tracking_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using cuda_mr  = rmm::mr::cuda_memory_resource;
using pool_mr  = rmm::mr::pool_memory_resource<cuda_mr>;
using stats_mr = rmm::mr::statistics_resource_adaptor<cuda_mr>;

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

static_assert(!std::is_copy_constructible_v<stats_mr>);
static_assert(!std::is_move_constructible_v<rmm::mr::limiting_resource_adaptor<cuda_mr>>);
static_assert(
  std::is_base_of_v<rmm::mr::detail::handle_resource, rmm::mr::tracking_resource_adaptor<cuda_mr>>);

bool contains(std::string const& haystack, std::string const& needle)
{
  return haystack.find(needle) != std::string::npos;
}

TEST(Aligned, AlignsAtAndAboveThreshold)
{
  cuda_mr upstream;
  for (std::size_t alignment : {std::size_t{256}, 4 * KiB, 64 * KiB, 2 * MiB}) {
    rmm::mr::aligned_resource_adaptor<cuda_mr> mr{&upstream, alignment, 8 * KiB};
    EXPECT_EQ(mr.get_upstream_resource(), &upstream);
    EXPECT_EQ(mr.resource_name(), "aligned_resource_adaptor");
    std::vector<std::pair<void*, std::size_t>> live;
    for (std::size_t bytes : {std::size_t{1}, KiB, 8 * KiB, 100 * KiB, 3 * MiB}) {
      void* p         = mr.allocate(bytes);
      auto const want = bytes >= 8 * KiB ? alignment : std::size_t{256};
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % want, 0U) << alignment << " " << bytes;
      live.emplace_back(p, bytes);
    }
    for (auto [p, b] : live) {
      mr.deallocate(p, b);
    }
  }
}

TEST(Aligned, BadAlignmentThrowsNamingIt)
{
  cuda_mr upstream;
  try {
    rmm::mr::aligned_resource_adaptor<cuda_mr> mr{&upstream, 1000};
    FAIL() << "expected logic_error";
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(e.what(), "1000")) << e.what();
  }
  EXPECT_THROW((rmm::mr::aligned_resource_adaptor<cuda_mr>{&upstream, 96}), rmm::logic_error);
  // A power of two below 256 is raised to 256, as RMM 25.10 does (RMM 25.02 accepts it too).
  rmm::mr::aligned_resource_adaptor<cuda_mr> small{&upstream, 128};
  void* p = small.allocate(128);
  EXPECT_TRUE(rmm::is_pointer_aligned(p, rmm::CUDA_ALLOCATION_ALIGNMENT));
  small.deallocate(p, 128);
  EXPECT_THROW((rmm::mr::aligned_resource_adaptor<cuda_mr>{nullptr}), rmm::logic_error);
}

TEST(Limiting, ExactLimitAndBoundary)
{
  cuda_mr upstream;
  rmm::mr::limiting_resource_adaptor<cuda_mr> mr{&upstream, MiB};
  EXPECT_EQ(mr.get_allocation_limit(), MiB);
  EXPECT_EQ(mr.get_upstream_resource(), &upstream);
  void* a = mr.allocate(MiB / 2);
  void* b = mr.allocate(MiB / 2 - 100);  // counted as MiB / 2
  EXPECT_EQ(mr.get_allocated_bytes(), MiB);
  try {
    (void)mr.allocate(1);
    FAIL() << "expected out_of_memory";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_TRUE(contains(e.what(), "1048576")) << e.what();
  }
  EXPECT_EQ(mr.get_allocated_bytes(), MiB);
  mr.deallocate(b, MiB / 2 - 100);
  void* c = mr.allocate(MiB / 2);
  mr.deallocate(a, MiB / 2);
  mr.deallocate(c, MiB / 2);
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_THROW((void)mr.allocate(MiB + 1), rmm::out_of_memory);
}

TEST(Limiting, ZeroLimitAllowsOnlyEmpty)
{
  cuda_mr upstream;
  rmm::mr::limiting_resource_adaptor<cuda_mr> mr{&upstream, 0};
  EXPECT_EQ(mr.allocate(0), nullptr);
  EXPECT_THROW((void)mr.allocate(1), rmm::out_of_memory);
  EXPECT_THROW((rmm::mr::limiting_resource_adaptor<cuda_mr>{&upstream, MiB, 3}), rmm::logic_error);
}

TEST(Statistics, CountersPushPop)
{
  cuda_mr upstream;
  stats_mr mr{&upstream};
  EXPECT_EQ(mr.get_upstream_resource(), &upstream);
  EXPECT_THROW(mr.pop_counters(), std::out_of_range);
  void* a                          = mr.allocate(1000);
  auto [outer_bytes, outer_allocs] = mr.push_counters();
  EXPECT_EQ(outer_bytes.value, 1000);
  EXPECT_EQ(outer_allocs.value, 1);
  EXPECT_EQ(mr.get_bytes_counter().value, 0);
  void* b = mr.allocate(3000);
  mr.deallocate(b, 3000);
  auto [inner_bytes, inner_allocs] = mr.pop_counters();
  EXPECT_EQ(inner_bytes.peak, 3000);
  EXPECT_EQ(inner_allocs.total, 1);
  auto const bytes = mr.get_bytes_counter();
  EXPECT_EQ(bytes.value, 1000);
  EXPECT_EQ(bytes.peak, 4000);
  EXPECT_EQ(bytes.total, 4000);
  EXPECT_EQ(mr.get_allocations_counter().peak, 2);
  mr.deallocate(a, 1000);
  EXPECT_EQ(mr.get_bytes_counter().value, 0);

  stats_mr::counter c{};
  c += 10;
  c -= 4;
  EXPECT_EQ(c.value, 6);
  EXPECT_EQ(c.peak, 10);
  EXPECT_EQ(c.total, 10);
}

TEST(Statistics, ExactUnderEightThreads)
{
  cuda_mr upstream;
  stats_mr mr{&upstream};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&mr] {
      for (int i = 0; i < 200; ++i) {
        void* p = mr.allocate(512);
        mr.deallocate(p, 512);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(mr.get_bytes_counter().value, 0);
  EXPECT_EQ(mr.get_bytes_counter().total, 8 * 200 * 512);
  EXPECT_EQ(mr.get_allocations_counter().total, 8 * 200);
  EXPECT_GE(mr.get_allocations_counter().peak, 1);
  EXPECT_LE(mr.get_allocations_counter().peak, 8);
}

TEST(Statistics, AsUpstreamOfRustPool)
{
  cuda_mr upstream;
  stats_mr stats{&upstream};
  {
    rmm::mr::pool_memory_resource<stats_mr> pool{&stats, 4 * MiB};
    EXPECT_EQ(stats.get_bytes_counter().value, static_cast<int64_t>(4 * MiB));
    void* p = pool.allocate(KiB);
    pool.deallocate(p, KiB);
  }
  EXPECT_EQ(stats.get_bytes_counter().value, 0);
}

TEST(Tracking, ListsExactlyOutstanding)
{
  cuda_mr upstream;
  rmm::mr::tracking_resource_adaptor<cuda_mr> mr{&upstream};
  std::vector<void*> ptrs;
  for (std::size_t i = 1; i <= 6; ++i) {
    ptrs.push_back(mr.allocate(i * KiB));
  }
  mr.deallocate(ptrs[0], KiB);
  mr.deallocate(ptrs[2], 3 * KiB);
  auto const& out = mr.get_outstanding_allocations();
  ASSERT_EQ(out.size(), 4U);
  EXPECT_EQ(out.at(ptrs[1]).allocation_size, 2 * KiB);
  EXPECT_EQ(out.at(ptrs[5]).allocation_size, 6 * KiB);
  EXPECT_EQ(out.at(ptrs[1]).strace, nullptr);
  EXPECT_EQ(out.count(ptrs[0]), 0U);
  EXPECT_EQ(mr.get_allocated_bytes(), (2 + 4 + 5 + 6) * KiB);
  auto const report = mr.get_outstanding_allocations_str();
  // RMM's format: one "<address>: <size> B" line per allocation.
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 4) << report;
  EXPECT_TRUE(contains(report, ": 2048 B\n")) << report;
  mr.log_outstanding_allocations();
  // A wrong size is logged and forwarded; the count uses the recorded size (as RMM).
  EXPECT_NO_THROW(mr.deallocate(ptrs[1], 7));
  EXPECT_EQ(mr.get_outstanding_allocations().size(), 3U);
  EXPECT_EQ(mr.get_allocated_bytes(), (4 + 5 + 6) * KiB);
  for (std::size_t i : {3, 4, 5}) {
    mr.deallocate(ptrs[i], (i + 1) * KiB);
  }
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_TRUE(mr.get_outstanding_allocations().empty());
}

// As RMM's NegativeInnerTracking and DeallocWrongBytes: pointers an inner adaptor never saw
// are still freed upstream, and wrong sizes are corrected in the count.
TEST(Tracking, ForwardsUntrackedPointersAndWrongSizes)
{
  cuda_mr upstream;
  stats_mr stats{&upstream};
  rmm::mr::tracking_resource_adaptor<stats_mr> mr{&stats};
  std::vector<void*> ptrs;
  for (int i = 0; i < 3; ++i) {
    ptrs.push_back(mr.allocate(10 * MiB));
  }
  rmm::mr::tracking_resource_adaptor<rmm::mr::tracking_resource_adaptor<stats_mr>> inner{&mr};
  for (int i = 0; i < 2; ++i) {
    ptrs.push_back(inner.allocate(10 * MiB));
  }
  EXPECT_EQ(mr.get_outstanding_allocations().size(), 5U);
  EXPECT_EQ(inner.get_outstanding_allocations().size(), 2U);
  for (void* p : ptrs) {
    EXPECT_NO_THROW(inner.deallocate(p, 10 * MiB));
  }
  EXPECT_EQ(inner.get_outstanding_allocations().size(), 0U);
  EXPECT_EQ(mr.get_outstanding_allocations().size(), 0U);
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_EQ(stats.get_bytes_counter().value, 0);

  ptrs.clear();
  for (int i = 0; i < 3; ++i) {
    ptrs.push_back(mr.allocate(10 * MiB));
  }
  for (void* p : ptrs) {
    EXPECT_NO_THROW(mr.deallocate(p, 5 * MiB));
  }
  EXPECT_EQ(mr.get_outstanding_allocations().size(), 0U);
  EXPECT_EQ(mr.get_allocated_bytes(), 0U);
  EXPECT_EQ(stats.get_allocations_counter().value, 0);
}

TEST(Tracking, CapturesStacks)
{
  cuda_mr upstream;
  rmm::mr::tracking_resource_adaptor<cuda_mr> mr{&upstream, true};
  void* p         = mr.allocate(KiB);
  auto const& out = mr.get_outstanding_allocations();
  ASSERT_NE(out.at(p).strace, nullptr);
  mr.deallocate(p, KiB);
}

bool retry_three_times(std::size_t, void* arg)
{
  auto* calls = static_cast<int*>(arg);
  return ++*calls <= 3;
}

TEST(FailureCallback, RetriesWhileTrue)
{
  cuda_mr upstream;
  rmm::mr::limiting_resource_adaptor<cuda_mr> limited{&upstream, MiB};
  int calls = 0;
  rmm::mr::failure_callback_resource_adaptor<rmm::mr::limiting_resource_adaptor<cuda_mr>> mr{
    &limited, retry_three_times, &calls};
  EXPECT_EQ(mr.get_upstream_resource(), &limited);
  EXPECT_THROW((void)mr.allocate(2 * MiB), rmm::out_of_memory);
  EXPECT_EQ(calls, 4);
  void* p = mr.allocate(KiB);
  EXPECT_EQ(calls, 4);
  mr.deallocate(p, KiB);
}

TEST(FailureCallback, CallbackCanFreeMemory)
{
  cuda_mr upstream;
  rmm::mr::limiting_resource_adaptor<cuda_mr> limited{&upstream, MiB};
  void* hog = limited.allocate(MiB);
  rmm::mr::failure_callback_resource_adaptor<rmm::mr::limiting_resource_adaptor<cuda_mr>> mr{
    &limited,
    [&](std::size_t, void*) {
      if (hog == nullptr) { return false; }
      limited.deallocate(hog, MiB);
      hog = nullptr;
      return true;
    },
    nullptr};
  void* p = mr.allocate(KiB);
  EXPECT_EQ(hog, nullptr);
  mr.deallocate(p, KiB);
}

struct custom_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(FailureCallback, ThrowingCallbackPropagates)
{
  cuda_mr upstream;
  rmm::mr::limiting_resource_adaptor<cuda_mr> limited{&upstream, KiB};
  rmm::mr::failure_callback_resource_adaptor<rmm::mr::limiting_resource_adaptor<cuda_mr>> mr{
    &limited, [](std::size_t, void*) -> bool { throw custom_error{"from the callback"}; }, nullptr};
  try {
    (void)mr.allocate(MiB);
    FAIL() << "expected custom_error";
  } catch (custom_error const& e) {
    EXPECT_STREQ(e.what(), "from the callback");
  }
  // The adaptor is still usable.
  void* p = mr.allocate(256);
  mr.deallocate(p, 256);
  EXPECT_THROW((rmm::mr::failure_callback_resource_adaptor<cuda_mr>{
                 &upstream, rmm::mr::failure_callback_t{}, nullptr}),
               rmm::logic_error);
}

// A user resource that always throws `Exception` ("foo").
template <typename Exception>
class throwing_mr final : public rmm::mr::device_memory_resource {
 public:
  int calls{0};

 private:
  void* do_allocate(std::size_t, rmm::cuda_stream_view) override
  {
    ++calls;
    throw Exception{"foo"};
  }
  void do_deallocate(void*, std::size_t, rmm::cuda_stream_view) override {}
};

bool retry_once(std::size_t, void* arg)
{
  auto* calls = static_cast<int*>(arg);
  return ++*calls == 1;
}

// The failures that call the callback follow ExceptionType, as a catch clause would.
TEST(FailureCallback, CatchSetFollowsExceptionType)
{
  using base = rmm::mr::device_memory_resource;
  throwing_mr<rmm::bad_alloc> bad_alloc_mr;
  throwing_mr<rmm::out_of_memory> oom_mr;
  {  // bad_alloc catches bad_alloc: one retry, then bad_alloc again (not out_of_memory).
    int calls = 0;
    rmm::mr::failure_callback_resource_adaptor<base, rmm::bad_alloc> mr{
      &bad_alloc_mr, retry_once, &calls};
    try {
      (void)mr.allocate(MiB);
      FAIL() << "expected rmm::bad_alloc";
    } catch (rmm::out_of_memory const&) {
      FAIL() << "expected rmm::bad_alloc, got rmm::out_of_memory";
    } catch (rmm::bad_alloc const& e) {
      EXPECT_TRUE(contains(e.what(), "foo")) << e.what();
    }
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(bad_alloc_mr.calls, 2);
  }
  {  // bad_alloc also catches out_of_memory (derived from it), rethrown as out_of_memory.
    int calls = 0;
    rmm::mr::failure_callback_resource_adaptor<base, rmm::bad_alloc> mr{
      &oom_mr, retry_once, &calls};
    EXPECT_THROW((void)mr.allocate(MiB), rmm::out_of_memory);
    EXPECT_EQ(calls, 2);
  }
  {  // std::bad_alloc catches both too.
    int calls = 0;
    rmm::mr::failure_callback_resource_adaptor<base, std::bad_alloc> mr{
      &bad_alloc_mr, retry_once, &calls};
    EXPECT_THROW((void)mr.allocate(MiB), rmm::bad_alloc);
    EXPECT_EQ(calls, 2);
  }
  {  // out_of_memory catches out_of_memory.
    int calls = 0;
    rmm::mr::failure_callback_resource_adaptor<base, rmm::out_of_memory> mr{
      &oom_mr, retry_once, &calls};
    EXPECT_THROW((void)mr.allocate(MiB), rmm::out_of_memory);
    EXPECT_EQ(calls, 2);
  }
  {  // out_of_memory (the default) lets bad_alloc through without calling back.
    int calls          = 0;
    bad_alloc_mr.calls = 0;
    rmm::mr::failure_callback_resource_adaptor<base> mr{&bad_alloc_mr, retry_once, &calls};
    EXPECT_THROW((void)mr.allocate(MiB), rmm::bad_alloc);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(bad_alloc_mr.calls, 1);
  }
}

TEST(ThreadSafe, ManyThreads)
{
  cuda_mr upstream;
  pool_mr pool{&upstream, 0};
  rmm::mr::thread_safe_resource_adaptor<pool_mr> mr{&pool};
  EXPECT_EQ(mr.get_upstream_resource(), &pool);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&mr] {
      std::vector<void*> mine;
      for (int i = 1; i <= 100; ++i) {
        mine.push_back(mr.allocate(i * 256));
      }
      for (int i = 1; i <= 100; ++i) {
        mr.deallocate(mine[i - 1], i * 256);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
}

TEST(Prefetch, AllocatesOverManagedAndDevice)
{
  rmm::mr::managed_memory_resource managed;
  rmm::mr::prefetch_resource_adaptor<rmm::mr::managed_memory_resource> mr{&managed};
  EXPECT_EQ(mr.get_upstream_resource(), &managed);
  void* p = mr.allocate(MiB);
  EXPECT_NE(p, nullptr);
  rmm::cuda_stream_view{}.synchronize();
  mr.deallocate(p, MiB);
  // Device memory cannot be prefetched: the hint is skipped, the allocation succeeds.
  cuda_mr device;
  rmm::mr::prefetch_resource_adaptor<cuda_mr> on_device{&device};
  void* q = on_device.allocate(MiB);
  EXPECT_NE(q, nullptr);
  on_device.deallocate(q, MiB);
}

TEST(OwningWrapper, OwnsItsUpstreams)
{
  auto cuda = std::make_shared<cuda_mr>();
  auto pool = rmm::mr::make_owning_wrapper<rmm::mr::pool_memory_resource>(cuda, 2 * MiB);
  static_assert(
    std::is_same_v<decltype(pool), std::shared_ptr<rmm::mr::owning_wrapper<pool_mr, cuda_mr>>>);
  std::weak_ptr<cuda_mr> weak = cuda;
  cuda.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(pool->wrapped().pool_size(), 2 * MiB);
  EXPECT_EQ(pool->wrapped().get_upstream_resource(), pool->upstream().get());
  EXPECT_EQ(std::get<0>(pool->upstreams()).get(), pool->upstream().get());
  void* p = pool->allocate(KiB);
  pool->deallocate(p, KiB);
  EXPECT_TRUE(pool->is_equal(*pool));

  // An owning wrapper of an adaptor over the owning pool.
  auto stats = rmm::mr::make_owning_wrapper<rmm::mr::statistics_resource_adaptor>(pool);
  void* q    = stats->allocate(KiB);
  EXPECT_EQ(stats->wrapped().get_bytes_counter().value, static_cast<int64_t>(KiB));
  stats->deallocate(q, KiB);
  pool.reset();
  stats.reset();
  EXPECT_TRUE(weak.expired());
}

// As RMM's adaptor_tests `Equality`: an adaptor equals another of its type over an equal
// upstream (the aligned adaptor also compares alignment and threshold), never one of
// another type; owning_wrapper compares what it wraps.
template <typename Adaptor>
std::unique_ptr<Adaptor> make_adaptor(cuda_mr* upstream)
{
  if constexpr (std::is_same_v<Adaptor, rmm::mr::failure_callback_resource_adaptor<cuda_mr>>) {
    return std::make_unique<Adaptor>(
      upstream, [](std::size_t, void*) { return false; }, nullptr);
  } else if constexpr (std::is_same_v<Adaptor, rmm::mr::limiting_resource_adaptor<cuda_mr>>) {
    return std::make_unique<Adaptor>(upstream, 64 * MiB);
  } else if constexpr (std::is_same_v<Adaptor, rmm::mr::logging_resource_adaptor<cuda_mr>>) {
    // The CSV is not looked at; it goes to the temporary directory, not the working one.
    auto const log = std::filesystem::temp_directory_path() / "rmm_rs_adaptor_equality_log.txt";
    return std::make_unique<Adaptor>(upstream, log.string());
  } else {
    return std::make_unique<Adaptor>(upstream);
  }
}

template <typename Adaptor>
void expect_adaptor_equality()
{
  cuda_mr cuda;
  cuda_mr other_cuda;
  auto mr = make_adaptor<Adaptor>(&cuda);
  EXPECT_TRUE(mr->is_equal(*mr));
  EXPECT_TRUE(mr->is_equal(*make_adaptor<Adaptor>(&cuda)));
  EXPECT_TRUE(mr->is_equal(*make_adaptor<Adaptor>(&other_cuda)));
  EXPECT_FALSE(mr->is_equal(cuda));
  stats_mr stats{&cuda};
  rmm::mr::statistics_resource_adaptor<stats_mr> over_stats{&stats};
  if constexpr (!std::is_same_v<Adaptor, stats_mr>) { EXPECT_FALSE(mr->is_equal(over_stats)); }
  if constexpr (!std::is_same_v<Adaptor, rmm::mr::aligned_resource_adaptor<cuda_mr>>) {
    rmm::mr::aligned_resource_adaptor<rmm::mr::device_memory_resource> aligned{&cuda};
    EXPECT_FALSE(mr->is_equal(aligned));
  }
}

TEST(AdaptorEquality, SameTypeOverEqualUpstreamIsEqual)
{
  expect_adaptor_equality<rmm::mr::aligned_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<rmm::mr::failure_callback_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<rmm::mr::limiting_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<rmm::mr::logging_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<stats_mr>();
  expect_adaptor_equality<rmm::mr::thread_safe_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<rmm::mr::tracking_resource_adaptor<cuda_mr>>();
  expect_adaptor_equality<rmm::mr::prefetch_resource_adaptor<cuda_mr>>();

  cuda_mr cuda;
  rmm::mr::aligned_resource_adaptor<cuda_mr> aligned{&cuda, 4096};
  EXPECT_TRUE(aligned.is_equal(rmm::mr::aligned_resource_adaptor<cuda_mr>{&cuda, 4096}));
  EXPECT_FALSE(aligned.is_equal(rmm::mr::aligned_resource_adaptor<cuda_mr>{&cuda, 512}));
  EXPECT_FALSE(aligned.is_equal(rmm::mr::aligned_resource_adaptor<cuda_mr>{&cuda, 4096, 1024}));

  auto owning_a =
    rmm::mr::make_owning_wrapper<rmm::mr::aligned_resource_adaptor>(std::make_shared<cuda_mr>());
  auto owning_b =
    rmm::mr::make_owning_wrapper<rmm::mr::aligned_resource_adaptor>(std::make_shared<cuda_mr>());
  EXPECT_TRUE(owning_a->is_equal(*owning_a));
  EXPECT_TRUE(owning_a->is_equal(*owning_b));
  EXPECT_TRUE(owning_a->is_equal(rmm::mr::aligned_resource_adaptor<cuda_mr>{&cuda}));
  EXPECT_FALSE(owning_a->is_equal(rmm::mr::limiting_resource_adaptor<cuda_mr>{&cuda, MiB}));
}

}  // namespace
