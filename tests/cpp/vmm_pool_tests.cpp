// rmm::mr::vmm_pool_memory_resource of the 25.02 and 25.10 generations (a device_memory_resource
// over librmm's pool on virtual memory), compiled once per generation (the targets set
// RMM_API_VERSION) and run on the host runtime, whose emulated device has virtual memory
// management: allocation through rmm::device_buffer, growth in place, release() while blocks
// live, the maximum, bad input, the current device resource. The VmmPool*WithoutVmm tests run
// in a ctest of their own with RMM_HOST_VMM=0 (a device without virtual memory management).
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/vmm_pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#if RMM_API_GENERATION != 2502 && RMM_API_GENERATION != 2510
#error "vmm_pool_tests.cpp is a 25.02 or 25.10 translation unit (RMM_API_VERSION=2502 or 2510)"
#endif

// One suite name per generation, so that ctest names the two programs' tests apart.
#if RMM_API_GENERATION == 2502
#define VMM_POOL             VmmPool2502
#define VMM_POOL_WITHOUT_VMM VmmPool2502WithoutVmm
#else
#define VMM_POOL             VmmPool2510
#define VMM_POOL_WITHOUT_VMM VmmPool2510WithoutVmm
#endif

namespace {

namespace mr = rmm::mr;
using mr::vmm_pool_memory_resource;
using mr::vmm_pool_options;

constexpr std::size_t MiB = std::size_t{1} << 20;

static_assert(std::is_base_of_v<mr::device_memory_resource, vmm_pool_memory_resource>);
// RMM's pools are neither copyable nor movable.
static_assert(!std::is_copy_constructible_v<vmm_pool_memory_resource>);
static_assert(!std::is_move_constructible_v<vmm_pool_memory_resource>);
// All defaults: explicit, so a size never converts into a resource by accident.
static_assert(std::is_default_constructible_v<vmm_pool_memory_resource>);
static_assert(!std::is_convertible_v<std::size_t, vmm_pool_memory_resource>);

// A small reservation, so that each test reserves little address space.
vmm_pool_options small_reservation(std::size_t reserved = 256 * MiB)
{
  vmm_pool_options options;
  options.reserved_size = reserved;
  return options;
}

bool without_vmm_environment()
{
  char const* v = std::getenv("RMM_HOST_VMM");
  return v != nullptr && std::string{v} == "0";
}

// Where the device has no virtual memory management (a GPU without it, or RMM_HOST_VMM=0),
// the tests that need it skip.
bool vmm_supported()
{
  rmm_resource_t probe = nullptr;
  rmm_status_t status  = rmm_vmm_pool_create(nullptr, &probe);
  if (status == RMM_STATUS_SUCCESS) { (void)rmm_resource_release(probe); }
  return status == RMM_STATUS_SUCCESS;
}

// The pool's default granularity on this device (the device's recommended one).
std::size_t device_granularity()
{
  rmm_resource_t probe = nullptr;
  rmm_vmm_pool_options options{};
  EXPECT_EQ(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  options.reserved_size = 64 * MiB;
  EXPECT_EQ(rmm_vmm_pool_create(&options, &probe), RMM_STATUS_SUCCESS);
  rmm_vmm_pool_stats stats{};
  EXPECT_EQ(rmm_vmm_pool_get_stats(probe, &stats), RMM_STATUS_SUCCESS);
  (void)rmm_resource_release(probe);
  return stats.granularity;
}

#define SKIP_WITHOUT_VMM()                                                                   \
  do {                                                                                       \
    if (!vmm_supported()) { GTEST_SKIP() << "no virtual memory management on this device"; } \
  } while (0)

// Fills `bytes` at `p` with `value` through the runtime and checks three bytes of it.
void fill_and_check(void* p, std::size_t bytes, int value, rmm::cuda_stream_view stream = {})
{
  auto c_stream = reinterpret_cast<rmm_stream_t>(stream.value());
  ASSERT_EQ(rmm_memset_async(p, value, bytes, c_stream), RMM_STATUS_SUCCESS);
  for (std::size_t at : {std::size_t{0}, bytes / 2, bytes - 1}) {
    unsigned char b = 0;
    ASSERT_EQ(rmm_memcpy_async(&b, static_cast<unsigned char*>(p) + at, 1, c_stream),
              RMM_STATUS_SUCCESS);
    ASSERT_EQ(rmm_stream_synchronize(c_stream), RMM_STATUS_SUCCESS);
    EXPECT_EQ(b, static_cast<unsigned char>(value)) << "byte " << at << " of " << p;
  }
}

TEST(VMM_POOL, DeviceBufferAllocatesAndMemsetsFromThePool)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  EXPECT_EQ(pool.resource_name(), "vmm_pool_memory_resource");
  EXPECT_EQ(pool.pool_size(), 0U) << "grows on demand";
  EXPECT_EQ(pool.reserved_size(), 256 * MiB);
  EXPECT_EQ(pool.maximum_pool_size(), 256 * MiB) << "no maximum: the reservation";
  EXPECT_GT(pool.granularity(), 0U);
  EXPECT_TRUE(pool.supports_streams());
  rmm::cuda_stream stream;
  {
    rmm::device_buffer buf{3 * MiB + 100, stream.view(), rmm::device_async_resource_ref{pool}};
    ASSERT_NE(buf.data(), nullptr);
    EXPECT_EQ(buf.memory_resource(), rmm::device_async_resource_ref{pool});
    fill_and_check(buf.data(), buf.size(), 0x5a, stream.view());
    EXPECT_GE(pool.pool_size(), buf.size());
    EXPECT_EQ(pool.pool_size() % pool.granularity(), 0U);
    EXPECT_EQ(pool.bytes_free() + rmm::align_up(buf.size(), 256), pool.pool_size());
    // A copy on the same resource.
    rmm::device_buffer copy{buf, stream.view(), rmm::device_async_resource_ref{pool}};
    std::vector<unsigned char> host(copy.size());
    ASSERT_EQ(
      rmm_memcpy_async(
        host.data(), copy.data(), copy.size(), reinterpret_cast<rmm_stream_t>(stream.value())),
      RMM_STATUS_SUCCESS);
    stream.synchronize();
    EXPECT_EQ(host.front(), 0x5a);
    EXPECT_EQ(host.back(), 0x5a);
  }
  stream.synchronize();
  EXPECT_EQ(pool.bytes_free(), pool.pool_size()) << "both buffers went back to the pool";
  // An initial size is mapped at once, rounded up to the granularity.
  vmm_pool_memory_resource primed{pool.granularity() + 1, std::nullopt, small_reservation()};
  EXPECT_EQ(primed.pool_size(), 2 * primed.granularity());
}

TEST(VMM_POOL, GrowsInPlaceSoFreeMemoryOfEveryGrowthMerges)
{
  SKIP_WITHOUT_VMM();
  std::size_t const g = device_granularity();
  // The first allocation takes the whole initial mapping: the second must grow the pool.
  vmm_pool_memory_resource pool{g, std::nullopt, small_reservation()};
  ASSERT_EQ(pool.pool_size(), g);
  void* first = pool.allocate(g);
  EXPECT_EQ(pool.bytes_free(), 0U);
  void* second = pool.allocate(4 * g);
  EXPECT_GE(pool.pool_size(), 5 * g) << "the pool grew";
  EXPECT_EQ(static_cast<char*>(second), static_cast<char*>(first) + g)
    << "the growth is mapped right after the initial mapping";
  fill_and_check(first, g, 0x21);
  fill_and_check(second, 4 * g, 0x42);
  pool.deallocate(first, g);
  pool.deallocate(second, 4 * g);
  EXPECT_EQ(pool.largest_free_block(), pool.bytes_free()) << "one free block across growths";
  EXPECT_EQ(pool.bytes_free(), pool.pool_size());
  EXPECT_EQ(pool.free_block_count(), 1U);
  EXPECT_EQ(pool.fragmentation(), 0.0);
  // So the whole pool is one allocation, from the start of the reservation.
  std::size_t const everything = pool.pool_size();
  void* all                    = pool.allocate(everything);
  EXPECT_EQ(all, first);
  EXPECT_EQ(pool.pool_size(), everything) << "no growth needed";
  pool.deallocate(all, everything);
  auto const s = pool.stats();
  EXPECT_EQ(s.pool_size, everything);
  EXPECT_EQ(s.granularity, g);
}

TEST(VMM_POOL, ReleaseWhileABlockLivesShrinksThePool)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  std::size_t const g = pool.granularity();
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) {
    blocks.push_back(pool.allocate(2 * g));
  }
  std::size_t const grown = pool.pool_size();
  ASSERT_GE(grown, 20 * g);
  // Keep the first and the last, free the eight between them.
  for (std::size_t i = 1; i + 1 < blocks.size(); ++i) {
    pool.deallocate(blocks[i], 2 * g);
  }
  EXPECT_EQ(pool.pool_size(), grown) << "nothing unmapped before release()";
  std::size_t const released = pool.release();
  EXPECT_GE(released, 16 * g);
  EXPECT_EQ(pool.pool_size(), grown - released);
  EXPECT_LE(pool.pool_size(), 4 * g + (grown - 20 * g));
  // The survivors are intact and usable; the hole between them maps again on demand.
  fill_and_check(blocks.front(), 2 * g, 1);
  fill_and_check(blocks.back(), 2 * g, 2);
  void* again = pool.allocate(8 * g);
  fill_and_check(again, 8 * g, 3);
  pool.deallocate(again, 8 * g);
  pool.deallocate(blocks.front(), 2 * g);
  pool.deallocate(blocks.back(), 2 * g);
  pool.release();
  EXPECT_EQ(pool.pool_size(), 0U);
  EXPECT_EQ(pool.release(), 0U) << "nothing left to release";
}

TEST(VMM_POOL, ReleaseThresholdUnmapsAfterFrees)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_options options  = small_reservation();
  options.release_threshold = 0;
  vmm_pool_memory_resource pool{0, std::nullopt, options};
  std::size_t const g = pool.granularity();
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) {
    blocks.push_back(pool.allocate(2 * g));
  }
  for (void* p : blocks) {
    pool.deallocate(p, 2 * g);
  }
  EXPECT_LE(pool.pool_size(), 2 * g) << "frees above the threshold unmapped the pool";
}

TEST(VMM_POOL, MaximumIsHonouredAndTheErrorNamesTheSize)
{
  SKIP_WITHOUT_VMM();
  std::size_t const g = device_granularity();
  vmm_pool_memory_resource pool{g, 4 * g, small_reservation()};
  EXPECT_EQ(pool.maximum_pool_size(), 4 * g);
  EXPECT_EQ(pool.pool_size(), g);
  void* all = pool.allocate(4 * g);
  EXPECT_EQ(pool.pool_size(), 4 * g);
  pool.deallocate(all, 4 * g);
  std::size_t const too_much = 5 * g;
  try {
    (void)pool.allocate(too_much);
    FAIL() << "allocated beyond the maximum";
  } catch (rmm::out_of_memory const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find(std::to_string(too_much)), std::string::npos) << what;
    EXPECT_NE(what.find("out_of_memory"), std::string::npos) << what;
#if RMM_API_GENERATION >= 2510
    EXPECT_NE(what.find("Maximum pool size exceeded (failed to allocate"), std::string::npos)
      << what;
#endif
  }
  EXPECT_LE(pool.pool_size(), 4 * g) << "never mapped beyond the maximum";
  // A maximum that is not a whole number of granules is rounded down.
  vmm_pool_memory_resource rounded{0, 2 * g + g / 2, small_reservation()};
  EXPECT_EQ(rounded.maximum_pool_size(), 2 * g);
  EXPECT_THROW((void)rounded.allocate(2 * g + 256), rmm::out_of_memory);
}

TEST(VMM_POOL, BadInputThrowsWithAClearMessage)
{
  SKIP_WITHOUT_VMM();
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
  std::size_t const g              = device_granularity();
  vmm_pool_options bad_granularity = small_reservation();
  bad_granularity.granularity      = g + g / 2;
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, bad_granularity};
    },
    {"vmm_pool_memory_resource",
     "granularity",
     std::to_string(g + g / 2),
     "multiple",
     std::to_string(g)});
  vmm_pool_options zero_granularity = small_reservation();
  zero_granularity.granularity      = 0;
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, zero_granularity};
    },
    {"granularity is 0", "std::nullopt"});
  vmm_pool_options zero_reserved;
  zero_reserved.reserved_size = 0;
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, zero_reserved};
    },
    {"reserved_size is 0"});
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
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, 512 * MiB, small_reservation(256 * MiB)};
    },
    {"reserved_size"});
  vmm_pool_options bad_peer = small_reservation();
  bad_peer.peer_devices     = {rmm::cuda_device_id{999}};
  expect_logic_error(
    [&] {
      vmm_pool_memory_resource p{0, std::nullopt, bad_peer};
    },
    {"peer device 999"});
  // The device itself as a peer is harmless.
  vmm_pool_options self_peer = small_reservation();
  self_peer.peer_devices     = {rmm::get_current_cuda_device()};
  vmm_pool_memory_resource with_self{0, std::nullopt, self_peer};
  void* p = with_self.allocate(1000);
  fill_and_check(p, 1000, 7);
  with_self.deallocate(p, 1000);
}

TEST(VMM_POOL, EqualOnlyToItself)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource a{0, std::nullopt, small_reservation()};
  vmm_pool_memory_resource b{0, std::nullopt, small_reservation()};
  EXPECT_TRUE(a.is_equal(a));
  EXPECT_FALSE(a.is_equal(b));
  EXPECT_EQ(rmm::device_async_resource_ref{a}, rmm::device_async_resource_ref{a});
  EXPECT_NE(rmm::device_async_resource_ref{a}, rmm::device_async_resource_ref{b});
}

TEST(VMM_POOL, AsTheCurrentDeviceResource)
{
  SKIP_WITHOUT_VMM();
  vmm_pool_memory_resource pool{0, std::nullopt, small_reservation()};
  auto* previous = mr::set_current_device_resource(&pool);
  EXPECT_EQ(mr::get_current_device_resource(), &pool);
  {
    rmm::device_buffer buf{5000, rmm::cuda_stream_view{}};  // the current resource
    EXPECT_EQ(buf.memory_resource(), rmm::device_async_resource_ref{pool});
    EXPECT_GT(pool.pool_size(), 0U);
    EXPECT_EQ(pool.pool_size() - pool.bytes_free(), rmm::align_up(std::size_t{5000}, 256));
    // C code sees the same pool as the current resource.
    rmm_resource_t current = nullptr;
    ASSERT_EQ(rmm_get_current_device_resource(&current), RMM_STATUS_SUCCESS);
    rmm_vmm_pool_stats stats{};
    ASSERT_EQ(rmm_vmm_pool_get_stats(current, &stats), RMM_STATUS_SUCCESS);
    EXPECT_EQ(stats.pool_size, pool.pool_size());
    (void)rmm_resource_release(current);
  }
  EXPECT_EQ(mr::set_current_device_resource(previous), &pool);
  // The same through the reference API.
  mr::set_current_device_resource_ref(pool);
  EXPECT_EQ(mr::get_current_device_resource_ref(), rmm::device_async_resource_ref{pool});
  {
    rmm::device_buffer buf{100, rmm::cuda_stream_view{}};
    EXPECT_EQ(buf.memory_resource(), rmm::device_async_resource_ref{pool});
  }
  mr::reset_current_device_resource_ref();
  EXPECT_NE(mr::get_current_device_resource(), &pool);
}

// Run by the ctest with RMM_HOST_VMM=0 (skipped elsewhere): a device without virtual memory
// management refuses the pool with rmm::logic_error saying why.
TEST(VMM_POOL_WITHOUT_VMM, ConstructionThrowsLogicErrorSayingWhy)
{
  if (!without_vmm_environment()) { GTEST_SKIP() << "runs with RMM_HOST_VMM=0 only"; }
  rmm_resource_t probe = nullptr;
  EXPECT_EQ(rmm_vmm_pool_create(nullptr, &probe), RMM_STATUS_UNSUPPORTED);
  try {
    vmm_pool_memory_resource pool{};
    FAIL() << "created a vmm pool without virtual memory management";
  } catch (rmm::logic_error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("virtual memory management"), std::string::npos) << what;
    EXPECT_NE(what.find("pool_memory_resource instead"), std::string::npos) << what;
  }
}

}  // namespace
