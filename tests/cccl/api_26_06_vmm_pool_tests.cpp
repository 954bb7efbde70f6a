// rmm::mr::vmm_pool_memory_resource of the 26.06 generation (RMM_API_VERSION=2606, C++20,
// CCCL >= 3.4) on the host runtime, whose emulated device has virtual memory management: a
// cuda::mr::shared_resource (copies share one pool, equality is identity), allocation through
// rmm::device_buffer, growth in place, release() while blocks live, the maximum, bad input,
// recognition inside any_resource and resource_ref (an adaptor over it reaches its handle),
// the current device resource. Api2606VmmPoolWithoutVmm runs in a ctest of its own with
// RMM_HOST_VMM=0 (a device without virtual memory management).
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/vmm_pool_memory_resource.hpp>  // the 25.x path forwards here
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/vmm_pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if RMM_API_GENERATION != 2606
#error "api_26_06_vmm_pool_tests.cpp must be compiled with RMM_API_VERSION=2606"
#endif

namespace {

using any_device = cuda::mr::any_resource<cuda::mr::device_accessible>;
namespace mr     = rmm::mr;
using mr::vmm_pool_memory_resource;
using mr::vmm_pool_options;

constexpr std::size_t MiB = std::size_t{1} << 20;

static_assert(cuda::mr::resource_with<vmm_pool_memory_resource, cuda::mr::device_accessible>);
static_assert(
  std::is_base_of_v<cuda::mr::shared_resource<mr::detail::vmm_pool_memory_resource_impl>,
                    vmm_pool_memory_resource>);
static_assert(std::is_copy_constructible_v<vmm_pool_memory_resource>);
static_assert(std::is_nothrow_move_constructible_v<vmm_pool_memory_resource>);
static_assert(std::is_default_constructible_v<vmm_pool_memory_resource>);
static_assert(!std::is_convertible_v<std::size_t, vmm_pool_memory_resource>);
static_assert(!std::is_polymorphic_v<vmm_pool_memory_resource>, "26.06: no virtual functions");

cuda::stream_ref default_stream() { return cuda::stream_ref{cudaStream_t{}}; }

vmm_pool_options small_reservation(std::size_t reserved = 256 * MiB)
{
  vmm_pool_options options;
  options.reserved_size = reserved;
  return options;
}

bool vmm_supported()
{
  rmm_resource_t probe = nullptr;
  rmm_status_t status  = rmm_vmm_pool_create(nullptr, &probe);
  if (status == RMM_STATUS_SUCCESS) { (void)rmm_resource_release(probe); }
  return status == RMM_STATUS_SUCCESS;
}

#define SKIP_WITHOUT_VMM()                                                                   \
  do {                                                                                       \
    if (!vmm_supported()) { GTEST_SKIP() << "no virtual memory management on this device"; } \
  } while (0)

std::size_t device_granularity()
{
  return vmm_pool_memory_resource{0, std::nullopt, small_reservation(64 * MiB)}.granularity();
}

void fill_and_check(void* p, std::size_t bytes, int value, cudaStream_t stream = nullptr)
{
  auto c_stream = reinterpret_cast<rmm_stream_t>(stream);
  ASSERT_EQ(rmm_memset_async(p, value, bytes, c_stream), RMM_STATUS_SUCCESS);
  for (std::size_t at : {std::size_t{0}, bytes / 2, bytes - 1}) {
    unsigned char b = 0;
    ASSERT_EQ(rmm_memcpy_async(&b, static_cast<unsigned char*>(p) + at, 1, c_stream),
              RMM_STATUS_SUCCESS);
    ASSERT_EQ(rmm_stream_synchronize(c_stream), RMM_STATUS_SUCCESS);
    EXPECT_EQ(b, static_cast<unsigned char>(value)) << "byte " << at << " of " << p;
  }
}

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

}  // namespace

TEST(Api2606VmmPool, DeviceBufferAllocatesAndMemsetsFromThePool)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  EXPECT_EQ(pool.pool_size(), 0U);
  EXPECT_EQ(pool.reserved_size(), 256 * MiB);
  EXPECT_EQ(pool.maximum_pool_size(), 256 * MiB);
  EXPECT_GT(pool.granularity(), 0U);
  rmm::cuda_stream stream;
  {
    // The buffer keeps a copy of the pool (any_resource): the same pool.
    rmm::device_buffer buf{3 * MiB + 100, stream.view(), pool};
    ASSERT_NE(buf.data(), nullptr);
    fill_and_check(buf.data(), buf.size(), 0x5a, stream.value());
    EXPECT_GE(pool.pool_size(), buf.size());
    EXPECT_EQ(pool.pool_size() % pool.granularity(), 0U);
    EXPECT_EQ(pool.bytes_free() + rmm::align_up(buf.size(), 256), pool.pool_size());
    rmm::device_buffer by_ref{1000, stream.view(), rmm::device_async_resource_ref{pool}};
    EXPECT_EQ(pool.pool_size() - pool.bytes_free(),
              rmm::align_up(buf.size(), 256) + rmm::align_up(std::size_t{1000}, 256));
  }
  stream.synchronize();
  EXPECT_EQ(pool.bytes_free(), pool.pool_size());
  // Through any_resource and the resource interface.
  any_device any{pool};
  void* p = any.allocate(default_stream(), 4096, 256);
  fill_and_check(p, 4096, 9);
  any.deallocate(default_stream(), p, 4096, 256);
  void* q = pool.allocate_sync(100);
  pool.deallocate_sync(q, 100);
}

TEST(Api2606VmmPool, GrowsInPlaceSoFreeMemoryOfEveryGrowthMerges)
{
  SKIP_WITHOUT_VMM();
  std::size_t const g = device_granularity();
  vmm_pool_memory_resource pool{g, std::nullopt, small_reservation()};
  ASSERT_EQ(pool.pool_size(), g);
  void* first  = pool.allocate(default_stream(), g);
  void* second = pool.allocate(default_stream(), 4 * g);
  EXPECT_GE(pool.pool_size(), 5 * g) << "the pool grew";
  EXPECT_EQ(static_cast<char*>(second), static_cast<char*>(first) + g)
    << "the growth is mapped right after the initial mapping";
  pool.deallocate(default_stream(), first, g);
  pool.deallocate(default_stream(), second, 4 * g);
  EXPECT_EQ(pool.largest_free_block(), pool.bytes_free());
  EXPECT_EQ(pool.free_block_count(), 1U);
  EXPECT_EQ(pool.fragmentation(), 0.0);
  std::size_t const everything = pool.pool_size();
  void* all                    = pool.allocate(default_stream(), everything);
  EXPECT_EQ(all, first);
  pool.deallocate(default_stream(), all, everything);
}

TEST(Api2606VmmPool, ReleaseWhileABlockLivesShrinksThePool)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  std::size_t const g = pool.granularity();
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) {
    blocks.push_back(pool.allocate(default_stream(), 2 * g));
  }
  std::size_t const grown = pool.pool_size();
  for (std::size_t i = 1; i + 1 < blocks.size(); ++i) {
    pool.deallocate(default_stream(), blocks[i], 2 * g);
  }
  // Copies share the pool: a copy releases it.
  vmm_pool_memory_resource copy{pool};
  std::size_t const released = copy.release();
  EXPECT_GE(released, 16 * g);
  EXPECT_EQ(pool.pool_size(), grown - released);
  fill_and_check(blocks.front(), 2 * g, 1);
  fill_and_check(blocks.back(), 2 * g, 2);
  pool.deallocate(default_stream(), blocks.front(), 2 * g);
  pool.deallocate(default_stream(), blocks.back(), 2 * g);
  pool.release();
  EXPECT_EQ(pool.pool_size(), 0U);
}

TEST(Api2606VmmPool, MaximumIsHonouredAndTheErrorNamesTheSize)
{
  SKIP_WITHOUT_VMM();
  std::size_t const g = device_granularity();
  vmm_pool_memory_resource pool{0, 4 * g, small_reservation()};
  EXPECT_EQ(pool.maximum_pool_size(), 4 * g);
  void* all = pool.allocate(default_stream(), 4 * g);
  pool.deallocate(default_stream(), all, 4 * g);
  std::size_t const too_much = 5 * g;
  try {
    (void)pool.allocate(default_stream(), too_much);
    FAIL() << "allocated beyond the maximum";
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find(std::to_string(too_much)), std::string::npos) << what;
    EXPECT_NE(what.find("maximum pool size exceeded"), std::string::npos) << what;
  }
  EXPECT_LE(pool.pool_size(), 4 * g);
}

TEST(Api2606VmmPool, BadInputThrowsWithAClearMessage)
{
  SKIP_WITHOUT_VMM();
  std::size_t const g     = device_granularity();
  auto expect_logic_error = [](auto make, std::vector<std::string> const& words) {
    try {
      make();
      ADD_FAILURE() << "no exception; expected one naming " << words.front();
    } catch (rmm::logic_error const& e) {
      std::string const what = e.what();
      for (auto const& w : words) {
        EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in: " << what;
      }
    }
  };
  vmm_pool_options bad_granularity = small_reservation();
  bad_granularity.granularity      = g + g / 2;
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, bad_granularity};
    },
    {"granularity", std::to_string(g + g / 2), "multiple", std::to_string(g)});
  vmm_pool_options zero_granularity = small_reservation();
  zero_granularity.granularity      = 0;
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, zero_granularity};
    },
    {"granularity is 0"});
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, 0, small_reservation()};
    },
    {"maximum_pool_size is 0"});
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{4 * g, 2 * g, small_reservation()};
    },
    {"initial_pool_size"});
  vmm_pool_options bad_peer = small_reservation();
  bad_peer.peer_devices     = {rmm::cuda_device_id{999}};
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, bad_peer};
    },
    {"peer device 999"});
  // A pointer the pool never handed out: reported on stderr, nothing freed, no crash.
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  int local = 0;
  testing::internal::CaptureStderr();
  pool.deallocate(default_stream(), &local, sizeof(local));
  std::string const err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("deallocate"), std::string::npos) << err;
}

// RMM 26.06's equality: a resource equals its copies (moved-from ones too) and nothing else.
TEST(Api2606VmmPool, CopiesShareOnePoolAndEqualityIsIdentity)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource a{0, std::nullopt, small_reservation()};
  vmm_pool_memory_resource b{0, std::nullopt, small_reservation()};
  vmm_pool_memory_resource copy{a};
  vmm_pool_memory_resource moved{std::move(copy)};
  EXPECT_EQ(a, copy);
  EXPECT_EQ(a, moved);
  EXPECT_NE(a, b);
  void* p = copy.allocate(default_stream(), 1 << 20);  // a moved-from resource stays usable
  EXPECT_EQ(a.pool_size(), moved.pool_size());
  EXPECT_LT(a.bytes_free(), a.pool_size());
  a.deallocate(default_stream(), p, 1 << 20);  // freed through another copy
  EXPECT_EQ(a.bytes_free(), a.pool_size());
  b = a;
  EXPECT_EQ(b, a);
  EXPECT_EQ(mr::detail::handle_of(b), mr::detail::handle_of(a));
}

// known_resources.hpp knows the class: inside an any_resource or a resource_ref it is found
// (resource_cast), and librmm reaches it through its own handle, not a callback bridge.
TEST(Api2606VmmPool, RecognisedInsideAnyResourceAndRefs)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource vmm{0, std::nullopt, small_reservation()};
  any_device any{vmm};
  auto* held = cuda::mr::resource_cast<vmm_pool_memory_resource>(&any);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, vmm);
  EXPECT_EQ(mr::detail::find_handle(any), mr::detail::handle_of(vmm));
  rmm::device_async_resource_ref ref{vmm};
  EXPECT_EQ(mr::detail::find_handle(ref), mr::detail::handle_of(vmm));
  // An adaptor and a pool over it talk to the vmm pool directly.
  mr::statistics_resource_adaptor stats{vmm};
  EXPECT_EQ(upstream_name(mr::detail::handle_of(stats)), "vmm_pool_memory_resource");
  mr::pool_memory_resource pool{any_device{ref}, 1 << 20};
  EXPECT_EQ(upstream_name(mr::detail::handle_of(pool)), "vmm_pool_memory_resource");
  void* p = stats.allocate(default_stream(), 1000);
  EXPECT_GT(vmm.pool_size(), 0U);
  stats.deallocate(default_stream(), p, 1000);
}

TEST(Api2606VmmPool, AsTheCurrentDeviceResource)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  auto previous = mr::set_current_device_resource(pool);
  auto current  = mr::get_current_device_resource_ref();
  auto* held    = cuda::mr::resource_cast<vmm_pool_memory_resource>(&current);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, pool);
  {
    rmm::device_buffer buf{5000, rmm::cuda_stream_view{}};  // the current resource
    EXPECT_EQ(pool.pool_size() - pool.bytes_free(), rmm::align_up(std::size_t{5000}, 256));
    // C code sees the same pool as the current resource.
    rmm_resource_t c_current = nullptr;
    ASSERT_EQ(rmm_get_current_device_resource(&c_current), RMM_STATUS_SUCCESS);
    rmm_vmm_pool_stats stats{};
    ASSERT_EQ(rmm_vmm_pool_get_stats(c_current, &stats), RMM_STATUS_SUCCESS);
    EXPECT_EQ(stats.pool_size, pool.pool_size());
    (void)rmm_resource_release(c_current);
  }
  auto replaced = mr::set_current_device_resource(std::move(previous));
  auto* back    = cuda::mr::resource_cast<vmm_pool_memory_resource>(&replaced);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(*back, pool);
  mr::reset_current_device_resource();
}

// Run by the ctest with RMM_HOST_VMM=0 (skipped elsewhere).
TEST(Api2606VmmPoolWithoutVmm, ConstructionThrowsLogicErrorSayingWhy)
{
  char const* v = std::getenv("RMM_HOST_VMM");
  if (v == nullptr || std::string{v} != "0") { GTEST_SKIP() << "runs with RMM_HOST_VMM=0 only"; }
  try {
    vmm_pool_memory_resource pool{};
    FAIL() << "created a vmm pool without virtual memory management";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("virtual memory management"), std::string::npos)
      << e.what();
  }
}
