// RMM 26.06's resources, adaptors and per-device API (RMM_API_VERSION=2606, C++20,
// CCCL >= 3.4) on the host runtime: every resource and adaptor through
// cuda::mr::any_resource, resource refs and resource_cast; copies sharing one object; upstream
// bridging (this layer's resources reach librmm through their own handle, a user resource
// through a callback resource); the per-device functions by value; bad input.
#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/is_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#if RMM_API_GENERATION != 2606
#error "api_26_06_mr_tests.cpp must be compiled with RMM_API_VERSION=2606"
#endif

namespace {

using any_device = cuda::mr::any_resource<cuda::mr::device_accessible>;
namespace mr     = rmm::mr;

cuda::stream_ref default_stream() { return cuda::stream_ref{cudaStream_t{}}; }

// Allocates, writes and frees through the type-erased interface.
void exercise(any_device& res, std::size_t bytes = 1000)
{
  void* p = res.allocate(default_stream(), bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rmm::is_pointer_aligned(p, rmm::CUDA_ALLOCATION_ALIGNMENT));
  ASSERT_EQ(rmm_memset_async(p, 0xab, bytes, nullptr), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_stream_synchronize(nullptr), RMM_STATUS_SUCCESS);
  res.deallocate(default_stream(), p, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  void* q = res.allocate_sync(bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_NE(q, nullptr);
  res.deallocate_sync(q, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

// The librmm kind of the resource librmm reaches behind `handle`'s upstream.
std::string upstream_name(rmm_resource_t handle)
{
  rmm_resource_t up = nullptr;
  EXPECT_EQ(rmm_resource_get_upstream(handle, &up), RMM_STATUS_SUCCESS);
  char const* name = nullptr;
  EXPECT_EQ(rmm_resource_name(up, &name), RMM_STATUS_SUCCESS);
  std::string result{name != nullptr ? name : ""};
  (void)rmm_resource_release(up);
  return result;
}

// The identity of the librmm resource behind `handle` (handles differ per reference).
std::uint64_t resource_id(rmm_resource_t handle)
{
  std::uint64_t id = 0;
  EXPECT_EQ(rmm_resource_id(handle, &id), RMM_STATUS_SUCCESS);
  return id;
}

// A user resource (not rmm's): host memory, counting its calls; copies share the counters.
struct counting_resource {
  std::shared_ptr<std::atomic<int>> allocations = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> frees       = std::make_shared<std::atomic<int>>(0);

  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment)
  {
    ++*allocations;
    return ::operator new (bytes, std::align_val_t{alignment});
  }
  void deallocate(cuda::stream_ref, void* p, std::size_t, std::size_t alignment) noexcept
  {
    ++*frees;
    ::operator delete (p, std::align_val_t{alignment});
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment)
  {
    return allocate(cuda::stream_ref{cudaStream_t{}}, bytes, alignment);
  }
  void deallocate_sync(void* p, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate(cuda::stream_ref{cudaStream_t{}}, p, bytes, alignment);
  }
  bool operator==(counting_resource const& other) const { return allocations == other.allocations; }
  bool operator!=(counting_resource const& other) const { return !(*this == other); }
  friend void get_property(counting_resource const&, cuda::mr::device_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<counting_resource, cuda::mr::device_accessible>);

}  // namespace

// Every resource and adaptor is a cuda::mr resource, usable through any_resource.
TEST(Api2606Mr, ConceptsAndProperties)
{
  static_assert(cuda::mr::resource_with<mr::cuda_memory_resource, cuda::mr::device_accessible>);
  static_assert(!cuda::mr::resource_with<mr::cuda_memory_resource, cuda::mr::host_accessible>);
  static_assert(cuda::mr::resource_with<mr::managed_memory_resource, cuda::mr::host_accessible>);
  static_assert(cuda::mr::resource_with<mr::pinned_host_memory_resource,
                                        cuda::mr::host_accessible,
                                        cuda::mr::device_accessible>);
  static_assert(cuda::mr::resource_with<mr::pool_memory_resource, cuda::mr::device_accessible>);
  static_assert(std::is_base_of_v<cuda::mr::shared_resource<mr::detail::pool_memory_resource_impl>,
                                  mr::pool_memory_resource>);
  static_assert(std::is_copy_constructible_v<mr::statistics_resource_adaptor>);
  static_assert(std::is_same_v<
                decltype(std::declval<mr::pool_memory_resource const&>().get_upstream_resource()),
                rmm::device_async_resource_ref>);
  mr::cuda_memory_resource cuda;
  static_assert(noexcept(cuda.deallocate(std::declval<cuda::stream_ref>(), nullptr, 0, 256)));
  static_assert(noexcept(cuda.deallocate_sync(nullptr, 0, 256)));
}

TEST(Api2606Mr, EveryResourceThroughAnyResource)
{
  mr::cuda_memory_resource cuda;
  std::ostringstream log;
  std::vector<any_device> all;
  all.emplace_back(cuda);
  all.emplace_back(mr::managed_memory_resource{});
  all.emplace_back(mr::pinned_host_memory_resource{});
  all.emplace_back(mr::cuda_async_memory_resource{});
  all.emplace_back(mr::cuda_async_managed_memory_resource{});
  all.emplace_back(mr::pool_memory_resource{cuda, 1 << 20});
  all.emplace_back(mr::fixed_size_memory_resource{cuda, 4096, 4});
  all.emplace_back(mr::binning_memory_resource{cuda, 10, 16});
  all.emplace_back(mr::arena_memory_resource{cuda, 1 << 22});
  all.emplace_back(mr::aligned_resource_adaptor{cuda, 4096});
  all.emplace_back(mr::limiting_resource_adaptor{cuda, 1 << 20});
  all.emplace_back(mr::logging_resource_adaptor{cuda, log});
  all.emplace_back(mr::prefetch_resource_adaptor{cuda});
  all.emplace_back(mr::statistics_resource_adaptor{cuda});
  all.emplace_back(mr::thread_safe_resource_adaptor{cuda});
  all.emplace_back(mr::tracking_resource_adaptor{cuda});
  all.emplace_back(mr::failure_callback_resource_adaptor<>{
    cuda, [](std::size_t, void*) { return false; }, nullptr});
  all.emplace_back(
    mr::callback_memory_resource{[](std::size_t bytes, rmm::cuda_stream_view, void* arg) {
                                   return static_cast<any_device*>(arg)->allocate_sync(bytes, 256);
                                 },
                                 [](void* p, std::size_t bytes, rmm::cuda_stream_view, void* arg) {
                                   static_cast<any_device*>(arg)->deallocate_sync(p, bytes, 256);
                                 },
                                 &all.front(),
                                 &all.front()});
  for (auto& res : all) {
    SCOPED_TRACE(res.type().name());
    exercise(res);
    EXPECT_NE(mr::detail::find_handle(res), nullptr);
  }
  EXPECT_NE(log.str().find("allocate"), std::string::npos);
}

TEST(Api2606Mr, RefsAndResourceCast)
{
  mr::cuda_memory_resource cuda;
  mr::statistics_resource_adaptor stats{cuda};
  rmm::device_async_resource_ref ref{stats};
  void* p = ref.allocate(default_stream(), 512, 256);
  EXPECT_EQ(stats.get_bytes_counter().value, 512);
  ref.deallocate(default_stream(), p, 512, 256);
  auto* back = cuda::mr::resource_cast<mr::statistics_resource_adaptor>(&ref);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(*back, stats);
  EXPECT_EQ(cuda::mr::resource_cast<mr::pool_memory_resource>(&ref), nullptr);

  any_device owning{stats};
  auto* held = cuda::mr::resource_cast<mr::statistics_resource_adaptor>(&owning);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, stats);  // a copy shares the counters
  exercise(owning, 300);
  EXPECT_EQ(stats.get_allocations_counter().total, 3);  // one above, two in exercise()
  // The upstream reference is the very resource given.
  auto up = stats.get_upstream_resource();
  EXPECT_NE(cuda::mr::resource_cast<mr::cuda_memory_resource>(&up), nullptr);
}

TEST(Api2606Mr, CopiesAndMovesShareOneResource)
{
  mr::cuda_memory_resource cuda;
  mr::pool_memory_resource pool{cuda, 1 << 20};
  mr::pool_memory_resource copy{pool};
  EXPECT_EQ(copy, pool);
  mr::pool_memory_resource moved{std::move(copy)};
  EXPECT_EQ(moved, pool);
  void* p = moved.allocate(default_stream(), 4096, 256);
  pool.deallocate(default_stream(), p, 4096, 256);  // same pool
  mr::pool_memory_resource other{cuda, 1 << 20};
  EXPECT_NE(other, pool);
  EXPECT_EQ(pool.pool_size(), std::size_t{1} << 20);
  // A moved-from resource stays the same usable resource.
  EXPECT_EQ(copy, pool);  // NOLINT(bugprone-use-after-move)
}

TEST(Api2606Mr, OurUpstreamIsReachedThroughItsOwnHandle)
{
  mr::cuda_memory_resource cuda;
  mr::statistics_resource_adaptor stats{cuda};
  mr::pool_memory_resource pool{stats, 1 << 20};
  EXPECT_EQ(upstream_name(mr::detail::handle_of(pool)), "statistics_resource_adaptor");
  EXPECT_EQ(upstream_name(mr::detail::handle_of(stats)), "cuda_memory_resource");
  EXPECT_EQ(stats.get_bytes_counter().value, 1 << 20);
  // Through a reference held in an any_resource too.
  mr::pool_memory_resource pool2{any_device{rmm::device_async_resource_ref{stats}}, 1 << 20};
  EXPECT_EQ(upstream_name(mr::detail::handle_of(pool2)), "statistics_resource_adaptor");
  EXPECT_EQ(stats.get_bytes_counter().value, 2 << 20);
  auto up = pool.get_upstream_resource();
  EXPECT_EQ(*cuda::mr::resource_cast<mr::statistics_resource_adaptor>(&up), stats);
}

TEST(Api2606Mr, UserUpstreamIsBridgedAndKeptAlive)
{
  counting_resource user;
  auto allocations = user.allocations;
  auto frees       = user.frees;
  {
    std::optional<mr::pool_memory_resource> pool;
    {
      any_device owner{user};
      pool.emplace(std::move(owner), 1 << 16);
    }
    EXPECT_EQ(upstream_name(mr::detail::handle_of(*pool)), "callback_memory_resource");
    EXPECT_EQ(allocations->load(), 1);
    void* p = pool->allocate(default_stream(), 1 << 17, 256);  // grows: a second upstream call
    EXPECT_EQ(allocations->load(), 2);
    pool->deallocate(default_stream(), p, 1 << 17, 256);
    // get_upstream_resource refers to the one object that allocates (no copy).
    auto up    = pool->get_upstream_resource();
    auto* held = cuda::mr::resource_cast<counting_resource>(&up);
    ASSERT_NE(held, nullptr);
    EXPECT_EQ(held->allocations, allocations);
  }
  EXPECT_EQ(frees->load(), 2);  // the pool gave everything back when it died
}

TEST(Api2606Mr, PoolStatisticsLimitingAndTrackingIntrospection)
{
  mr::cuda_memory_resource cuda;
  mr::limiting_resource_adaptor limit{cuda, 4096};
  EXPECT_EQ(limit.get_allocation_limit(), 4096U);
  void* p = limit.allocate(default_stream(), 1000, 256);
  EXPECT_EQ(limit.get_allocated_bytes(), 1024U);
  EXPECT_THROW((void)limit.allocate(default_stream(), 4096, 256), rmm::out_of_memory);
  limit.deallocate(default_stream(), p, 1000, 256);

  mr::statistics_resource_adaptor stats{cuda};
  void* a    = stats.allocate(default_stream(), 100, 256);
  auto frame = stats.push_counters();
  EXPECT_EQ(frame.first.value, 100);
  void* b = stats.allocate(default_stream(), 200, 256);
  EXPECT_EQ(stats.get_bytes_counter().value, 200);
  auto popped = stats.pop_counters();
  EXPECT_EQ(popped.first.total, 200);
  EXPECT_EQ(stats.get_bytes_counter().value, 300);
  EXPECT_THROW((void)stats.pop_counters(), std::out_of_range);
  stats.deallocate(default_stream(), a, 100, 256);
  stats.deallocate(default_stream(), b, 200, 256);

  mr::tracking_resource_adaptor tracking{cuda, true};
  void* t = tracking.allocate(default_stream(), 700, 256);
  EXPECT_EQ(tracking.get_allocated_bytes(), 700U);
  auto const& outstanding = tracking.get_outstanding_allocations();
  ASSERT_EQ(outstanding.size(), 1U);
  EXPECT_EQ(outstanding.begin()->first, t);
  EXPECT_EQ(outstanding.begin()->second.allocation_size, 700U);
  EXPECT_NE(tracking.get_outstanding_allocations_str().find("700"), std::string::npos);
  tracking.deallocate(default_stream(), t, 700, 256);
  EXPECT_TRUE(tracking.get_outstanding_allocations().empty());

  mr::fixed_size_memory_resource fixed{cuda, 1000};
  EXPECT_EQ(fixed.get_block_size(), 1024U);
  mr::binning_memory_resource bins{cuda};
  mr::fixed_size_memory_resource bin{cuda, 1 << 12};
  bins.add_bin(1 << 12, rmm::device_async_resource_ref{bin});
  counting_resource user;
  bins.add_bin(1 << 14, rmm::device_async_resource_ref{user});
  bins.add_bin(1 << 16);
  void* small = bins.allocate(default_stream(), 3000, 256);
  void* mid   = bins.allocate(default_stream(), 10000, 256);
  EXPECT_EQ(user.allocations->load(), 1);
  bins.deallocate(default_stream(), mid, 10000, 256);
  bins.deallocate(default_stream(), small, 3000, 256);
  auto async = mr::cuda_async_memory_resource{};
  EXPECT_NE(async.pool_handle(), nullptr);
  mr::cuda_async_view_memory_resource view{async.pool_handle()};
  any_device viewed{view};
  exercise(viewed);
  EXPECT_EQ(view, mr::cuda_async_view_memory_resource{async.pool_handle()});
}

TEST(Api2606Mr, FailureCallbackRetries)
{
  mr::cuda_memory_resource cuda;
  mr::limiting_resource_adaptor limit{cuda, 1024};
  int calls = 0;
  mr::failure_callback_resource_adaptor<> retry{
    limit, [](std::size_t, void* arg) { return ++*static_cast<int*>(arg) < 3; }, &calls};
  EXPECT_THROW((void)retry.allocate(default_stream(), 4096, 256), rmm::out_of_memory);
  EXPECT_EQ(calls, 3);
}

TEST(Api2606Mr, IsResourceAdaptor)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_TRUE(mr::is_resource_adaptor<mr::statistics_resource_adaptor>);
  EXPECT_FALSE(mr::is_resource_adaptor<mr::cuda_memory_resource>);
#pragma GCC diagnostic pop
}

TEST(Api2606Mr, PerDeviceByValue)
{
  auto initial = mr::get_current_device_resource_ref();
  EXPECT_NE(cuda::mr::resource_cast<mr::cuda_memory_resource>(&initial), nullptr);
  EXPECT_EQ(&mr::detail::initial_resource(), &mr::detail::initial_resource());

  mr::cuda_memory_resource cuda;
  mr::statistics_resource_adaptor stats{cuda};
  auto previous = mr::set_current_device_resource(stats);
  EXPECT_NE(cuda::mr::resource_cast<mr::cuda_memory_resource>(&previous), nullptr);
  auto current = mr::get_current_device_resource_ref();
  auto* held   = cuda::mr::resource_cast<mr::statistics_resource_adaptor>(&current);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, stats);
  // C code allocating from the current resource reaches the same adaptor.
  rmm_resource_t c_current = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&c_current), RMM_STATUS_SUCCESS);
  void* p = nullptr;
  ASSERT_EQ(rmm_allocate(c_current, 4096, &p), RMM_STATUS_SUCCESS);
  EXPECT_EQ(stats.get_bytes_counter().value, 4096);
  ASSERT_EQ(rmm_deallocate(c_current, p, 4096), RMM_STATUS_SUCCESS);
  (void)rmm_resource_release(c_current);

  // A user resource as current: C allocations reach it through a callback resource.
  counting_resource user;
  auto replaced = mr::set_current_device_resource(user);
  auto* back    = cuda::mr::resource_cast<mr::statistics_resource_adaptor>(&replaced);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(*back, stats);
  ASSERT_EQ(rmm_get_current_device_resource(&c_current), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_allocate(c_current, 64, &p), RMM_STATUS_SUCCESS);
  EXPECT_EQ(user.allocations->load(), 1);
  ASSERT_EQ(rmm_deallocate(c_current, p, 64), RMM_STATUS_SUCCESS);
  (void)rmm_resource_release(c_current);

  // Reset returns the previous value and restores the initial resource.
  auto last = mr::reset_current_device_resource();
  EXPECT_NE(cuda::mr::resource_cast<counting_resource>(&last), nullptr);
  auto again = mr::get_current_device_resource_ref();
  EXPECT_NE(cuda::mr::resource_cast<mr::cuda_memory_resource>(&again), nullptr);
  EXPECT_EQ(mr::get_per_device_resource_ref(rmm::cuda_device_id{0}), again);

  // A resource set from C is wrapped once, and that wrapper is what the getters return.
  rmm_resource_t c_pool = nullptr;
  rmm_resource_t c_cuda = nullptr;
  ASSERT_EQ(rmm_cuda_create(&c_cuda), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_pool_create(c_cuda, 1 << 20, 0, &c_pool), RMM_STATUS_SUCCESS);
  rmm_resource_t c_previous = nullptr;
  ASSERT_EQ(rmm_set_current_device_resource(c_pool, &c_previous), RMM_STATUS_SUCCESS);
  auto from_c  = mr::get_current_device_resource_ref();
  auto from_c2 = mr::get_current_device_resource_ref();
  EXPECT_EQ(resource_id(mr::detail::find_handle(from_c)), resource_id(c_pool));
  EXPECT_EQ(cuda::mr::resource_cast<mr::detail::registry_resource>(&from_c),
            cuda::mr::resource_cast<mr::detail::registry_resource>(&from_c2));
  // Our pool over it talks to the C pool directly.
  mr::pool_memory_resource over{any_device{from_c}, 1 << 16};
  EXPECT_EQ(upstream_name(mr::detail::handle_of(over)), "pool_memory_resource");
  auto c_set = mr::reset_current_device_resource();
  EXPECT_EQ(resource_id(mr::detail::find_handle(c_set)), resource_id(c_pool));
  (void)rmm_resource_release(c_previous);
  (void)rmm_resource_release(c_pool);
  (void)rmm_resource_release(c_cuda);
}

TEST(Api2606Mr, BadInputHasClearErrors)
{
  mr::cuda_memory_resource cuda;
  any_device empty{};
  try {
    mr::pool_memory_resource pool{std::move(empty), 1 << 20};
    FAIL() << "an empty upstream was accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("pool_memory_resource(upstream"), std::string::npos)
      << e.what();
    EXPECT_NE(std::string{e.what()}.find("empty"), std::string::npos) << e.what();
  }
  any_device given{cuda};
  any_device taken{std::move(given)};
  EXPECT_THROW(mr::statistics_resource_adaptor{std::move(given)}, rmm::logic_error);  // NOLINT
  EXPECT_THROW(mr::set_current_device_resource(any_device{}), rmm::logic_error);
  try {
    mr::pool_memory_resource pool{cuda, 1000};
    FAIL() << "a misaligned initial size was accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("1000 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("multiple of 256"), std::string::npos) << e.what();
  }
  EXPECT_THROW((mr::pool_memory_resource{cuda, 1 << 20, 1000}), rmm::logic_error);
  try {
    mr::pool_memory_resource pool{cuda, 1 << 20, 1 << 16};
    FAIL() << "maximum < initial was accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("exceeds maximum_pool_size"), std::string::npos)
      << e.what();
  }
  EXPECT_THROW(mr::cuda_async_view_memory_resource{cudaMemPool_t{}}, rmm::logic_error);
  EXPECT_THROW(mr::aligned_resource_adaptor(cuda, 3000), rmm::logic_error);
  // A pointer the pool never handed out: reported on stderr, nothing freed, no crash.
  mr::pool_memory_resource pool{cuda, 1 << 20};
  int local = 0;
  testing::internal::CaptureStderr();
  pool.deallocate(default_stream(), &local, sizeof(local), 256);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("deallocate"), std::string::npos) << err;
  void* p = pool.allocate(default_stream(), 256, 256);
  pool.deallocate(default_stream(), p, 256, 256);
}

// RMM 26.06's equality: a resource equals its copies and nothing else (two adaptors built
// alike over one upstream are different resources); the async resources compare their pools.
TEST(Api2606Mr, EqualityIsIdentityExceptForPools)
{
  mr::cuda_memory_resource cuda;
  mr::limiting_resource_adaptor a{cuda, 1 << 20};
  mr::limiting_resource_adaptor b{cuda, 1 << 20};
  EXPECT_EQ(a, mr::limiting_resource_adaptor{a});
  EXPECT_NE(a, b);
  mr::thread_safe_resource_adaptor t1{cuda};
  mr::thread_safe_resource_adaptor t2{cuda};
  EXPECT_NE(t1, t2);
  mr::aligned_resource_adaptor al1{cuda, 512};
  mr::aligned_resource_adaptor al2{cuda, 512};
  EXPECT_NE(al1, al2);
  EXPECT_EQ(mr::cuda_memory_resource{}, cuda);  // stateless: all equal
  try {
    mr::cuda_async_managed_memory_resource m1{};
    mr::cuda_async_managed_memory_resource m2{};
    EXPECT_EQ(m1, m2) << "both allocate from the device's one managed pool";
  } catch (rmm::logic_error const&) {
    GTEST_SKIP() << "this runtime has no managed memory pools";
  }
}

// RMM 26.06 raises an aligned adaptor's alignment below 256 bytes to 256.
TEST(Api2606Mr, SmallAlignmentsAreRaisedTo256)
{
  mr::cuda_memory_resource cuda;
  for (std::size_t alignment : {32UL, 64UL, 128UL}) {
    mr::aligned_resource_adaptor mr{cuda, alignment};
    void* p = mr.allocate_sync(alignment);
    EXPECT_TRUE(rmm::is_pointer_aligned(p, rmm::CUDA_ALLOCATION_ALIGNMENT));
    mr.deallocate_sync(p, alignment);
  }
  EXPECT_THROW((mr::aligned_resource_adaptor{cuda, 96}), rmm::logic_error);
}

// The callback resource calls its functions directly, as RMM's does: what they return is
// the allocation (NULL too), and every free reaches the deallocate function.
TEST(Api2606Mr, CallbackResourceCallsItsFunctionsDirectly)
{
  struct counts {
    int allocs{};
    int frees{};
    void* last_freed{reinterpret_cast<void*>(1)};
  } c;
  auto alloc = [](std::size_t, rmm::cuda_stream_view, void* arg) -> void* {
    ++static_cast<counts*>(arg)->allocs;
    return nullptr;
  };
  auto dealloc = [](void* p, std::size_t, rmm::cuda_stream_view, void* arg) {
    ++static_cast<counts*>(arg)->frees;
    static_cast<counts*>(arg)->last_freed = p;
  };
  mr::callback_memory_resource mr{alloc, dealloc, &c, &c};
  void* p = mr.allocate_sync(10 << 20);
  EXPECT_EQ(p, nullptr);
  mr.deallocate_sync(p, 10 << 20);
  cuda::mr::any_resource<cuda::mr::device_accessible> any{mr};
  EXPECT_EQ(any.allocate(default_stream(), 64, 256), nullptr);
  any.deallocate(default_stream(), nullptr, 64, 256);
  EXPECT_EQ(c.allocs, 2);
  EXPECT_EQ(c.frees, 2);
  EXPECT_EQ(c.last_freed, nullptr);
}
