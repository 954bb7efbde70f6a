// RMM 25.10's (hipMM 4.0's) additions to the C++ API, compiled as a 25.10 translation unit
// (RMM_API_VERSION=2510, set on this target only) and run on the host runtime: runtime
// capabilities, the rapids_logger namespace, device_uvector's reverse iterators, stream
// flags, CCCL 3.1's spelling of the resource interface, the cccl_*_resource_ref aliases and
// the out-of-memory texts that name reason and size.
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/detail/cccl_adaptors.hpp>
#include <rmm/detail/cuda_memory_resource.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/device/arena_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/fixed_size_memory_resource.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/host/new_delete_resource.hpp>
#include <rmm/mr/host/pinned_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#if RMM_API_VERSION != 2510 || RMM_API_GENERATION != 2510
#error "api_25_10_tests.cpp must be compiled with RMM_API_VERSION=2510"
#endif

namespace {

// The generation's names live in its own inline namespace.
static_assert(std::is_same_v<rmm::cuda_stream_view, rmm::api_25_10::cuda_stream_view>);
static_assert(RMM_VERSION_MAJOR == 25 && RMM_VERSION_MINOR == 10);

// The aliases are RMM 25.10's wrappers over the reference types.
using device_ref_base = rmm::detail::basic_resource_ref<rmm::detail::ref_access::device, true>;
static_assert(std::is_same_v<rmm::device_async_resource_ref,
                             rmm::detail::cccl_async_resource_ref<device_ref_base>>);
static_assert(
  std::is_same_v<rmm::host_resource_ref,
                 rmm::detail::cccl_resource_ref<
                   rmm::detail::basic_resource_ref<rmm::detail::ref_access::host, false>>>);
static_assert(std::is_convertible_v<rmm::device_async_resource_ref, rmm::device_resource_ref>);
static_assert(!std::is_convertible_v<rmm::device_resource_ref, rmm::device_async_resource_ref>);
static_assert(
  std::is_convertible_v<rmm::host_device_async_resource_ref, rmm::device_async_resource_ref>);
// A wrapper is a reference, never a resource a reference could point at.
static_assert(rmm::detail::is_basic_resource_ref<rmm::device_async_resource_ref>::value);

// rapids_logger's names are the logger's own types.
static_assert(std::is_same_v<rapids_logger::logger, rmm::logger>);
static_assert(std::is_same_v<decltype(rmm::default_logger()), rapids_logger::logger&>);
static_assert(std::is_same_v<rapids_logger::sink_ptr, std::shared_ptr<rapids_logger::sink>>);
static_assert(RAPIDS_LOGGER_LOG_LEVEL_TRACE == 0 && RAPIDS_LOGGER_LOG_LEVEL_INFO == 2 &&
              RAPIDS_LOGGER_LOG_LEVEL_OFF == 6);
static_assert(static_cast<int>(rapids_logger::level_enum::warn) == RAPIDS_LOGGER_LOG_LEVEL_WARN);

static_assert(
  static_cast<unsigned>(rmm::mr::cuda_async_memory_resource::mempool_usage::hw_decompress) == 0x2);

using stats_mr = rmm::mr::statistics_resource_adaptor<rmm::mr::cuda_memory_resource>;

TEST(Api2510, RuntimeCapabilitiesAnswerAsTheCAbi)
{
  int device = -1;
  ASSERT_EQ(rmm_get_current_device(&device), RMM_STATUS_SUCCESS);
  bool pools = false;
  ASSERT_EQ(rmm_device_supports_async_pools(device, &pools), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm::detail::runtime_async_alloc::is_supported(), pools);

  EXPECT_TRUE(rmm::detail::export_handle_type::is_supported(0));
  int mask = 0;
  ASSERT_EQ(rmm_device_async_pool_handle_types(device, &mask), RMM_STATUS_SUCCESS);
  using handle = rmm::mr::cuda_async_memory_resource::allocation_handle_type;
  EXPECT_EQ(rmm::detail::export_handle_type::is_supported(handle::posix_file_descriptor),
            (mask & 0x1) != 0);
  EXPECT_EQ(rmm::detail::export_handle_type::is_supported(handle::fabric), (mask & 0x8) != 0);

  int32_t concurrent = 0;
  ASSERT_EQ(rmm_device_get_attribute(&concurrent, 89, device), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm::detail::concurrent_managed_access::is_supported(), concurrent == 1);

  // Only CUDA's driver has the decompression engine; the host emulation is no CUDA runtime.
  char const* name = nullptr;
  ASSERT_EQ(rmm_runtime_name(&name), RMM_STATUS_SUCCESS);
  if (std::string{name} != "cuda") { EXPECT_FALSE(rmm::detail::hwdecompress::is_supported()); }
  EXPECT_EQ(RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION, 12080);
}

TEST(Api2510, RapidsLoggerSinksReceiveMessages)
{
  std::ostringstream out;
  auto sink = std::make_shared<rapids_logger::ostream_sink_mt>(out);
  rapids_logger::logger lg{"test", {sink}};
  lg.set_pattern("%v");
  lg.set_level(rapids_logger::level_enum::debug);
  lg.debug("value %d", 7);
  lg.trace("hidden");
  lg.flush();
  EXPECT_EQ(out.str(), "value 7\n");
}

TEST(Api2510, UvectorReverseIterators)
{
  rmm::cuda_stream stream;
  rmm::device_uvector<int> vec(5, stream.view());
  EXPECT_EQ(vec.rbegin().base(), vec.end());
  EXPECT_EQ(vec.crbegin().base(), vec.cend());
  EXPECT_EQ(vec.rend().base(), vec.begin());
  EXPECT_EQ(std::distance(vec.rbegin(), vec.rend()), 5);
  EXPECT_EQ(std::distance(vec.crend(), vec.crbegin()), -5);
  EXPECT_EQ((vec.rbegin() + 1).base(), vec.end() - 1);
  auto const& cvec = vec;
  static_assert(std::is_same_v<decltype(cvec.rbegin()), decltype(vec.crbegin())>);
  EXPECT_EQ(cvec.rend().base(), vec.cbegin());
  rmm::device_uvector<int> empty(0, stream.view());
  EXPECT_EQ(empty.rbegin(), empty.rend());
}

TEST(Api2510, StreamFlags)
{
  rmm::cuda_stream blocking{rmm::cuda_stream::flags::sync_default};
  rmm::cuda_stream non_blocking{rmm::cuda_stream::flags::non_blocking};
  EXPECT_TRUE(blocking.is_valid());
  EXPECT_TRUE(non_blocking.is_valid());
  EXPECT_NE(blocking.value(), non_blocking.value());
  non_blocking.synchronize();

  rmm::cuda_stream copy_initialized = rmm::cuda_stream::flags::non_blocking;
  rmm::cuda_stream list_initialized = {};
  EXPECT_TRUE(copy_initialized.is_valid() && list_initialized.is_valid());

  rmm::cuda_stream_pool pool{3, rmm::cuda_stream::flags::non_blocking};
  EXPECT_EQ(pool.get_pool_size(), 3U);
  EXPECT_NE(pool.get_stream(0).value(), pool.get_stream(1).value());
  EXPECT_EQ(pool.get_stream(0).value(), pool.get_stream(3).value());
  EXPECT_THROW(rmm::cuda_stream_pool(0, rmm::cuda_stream::flags::non_blocking), rmm::logic_error);
}

TEST(Api2510, StreamFirstAndSyncSpellingsOnResources)
{
  rmm::mr::cuda_memory_resource upstream;
  stats_mr mr{&upstream};
  rmm::cuda_stream stream;

  void* p = mr.allocate(stream.view(), 100);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(mr.get_bytes_counter().value, 256);  // rounded up to the 256-byte default
  mr.deallocate(stream.view(), p, 100);
  EXPECT_EQ(mr.get_bytes_counter().value, 0);

  p = mr.allocate_sync(1000, 512);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 512, 0U);
  EXPECT_EQ(mr.get_bytes_counter().value, 1024);
  mr.deallocate_sync(p, 1000, 512);
  EXPECT_EQ(mr.get_allocations_counter().total, 2);

  // RMM 25.02's spellings still select their own overloads.
  p = mr.allocate(64, stream.view());
  mr.deallocate(p, 64, stream.view());
  EXPECT_EQ(mr.get_allocations_counter().value, 0);

  rmm::mr::new_delete_resource host;
  void* h = host.allocate_sync(24, 8);
  host.deallocate_sync(h, 24, 8);

  rmm::mr::pinned_memory_resource pinned_old;
  void* o = pinned_old.allocate(stream.view(), 48, 16);
  pinned_old.deallocate(stream.view(), o, 48, 16);
  o = pinned_old.allocate(48);  // the base class's overloads stay visible
  pinned_old.deallocate(o, 48);

  rmm::mr::pinned_host_memory_resource pinned;
  void* q = pinned.allocate(stream.view(), 64);
  pinned.deallocate(stream.view(), q, 64);
}

TEST(Api2510, CcclReferenceWrappersKeepBothSpellings)
{
  rmm::mr::cuda_memory_resource upstream;
  stats_mr mr{&upstream};
  rmm::cuda_stream stream;
  rmm::device_async_resource_ref ref{mr};

  // A copy refers to the same resource (not to the first reference).
  rmm::device_async_resource_ref copy = ref;
  EXPECT_EQ(copy, ref);
  void* a = copy.allocate(stream.view(), 256);
  EXPECT_EQ(mr.get_allocations_counter().value, 1);
  ref.deallocate(stream.view(), a, 256);

  void* b = ref.allocate_async(512, stream.view());
  void* c = ref.allocate_sync(512);
  void* d = ref.allocate(512);
  EXPECT_EQ(mr.get_allocations_counter().value, 3);
  ref.deallocate_async(b, 512, stream.view());
  ref.deallocate_sync(c, 512);
  ref.deallocate(d, 512);
  EXPECT_EQ(mr.get_allocations_counter().value, 0);

  rmm::device_resource_ref sync_ref{ref};
  void* e = sync_ref.allocate_sync(128, 256);
  EXPECT_EQ(mr.get_bytes_counter().value, 256);
  sync_ref.deallocate_sync(e, 128, 256);

  // The checked conversion refuses a null resource, as in RMM 25.10.
  EXPECT_THROW(rmm::to_device_async_resource_ref_checked(static_cast<stats_mr*>(nullptr)),
               rmm::logic_error);
  auto checked = rmm::to_device_async_resource_ref_checked(&mr);
  EXPECT_EQ(checked, ref);
}

// RMM 25.10 names the reason and the request size of an out-of-memory failure.
std::string oom_text(rmm::device_async_resource_ref mr, std::size_t bytes)
{
  try {
    void* p = mr.allocate(rmm::cuda_stream_view{}, bytes);
    mr.deallocate(rmm::cuda_stream_view{}, p, bytes);
  } catch (rmm::out_of_memory const& e) {
    return e.what();
  }
  return "no failure";
}

TEST(Api2510, OutOfMemoryTextsNameReasonAndSize)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 1 << 20, 1 << 20};
  auto const pool_text = oom_text(pool, std::size_t{4} << 20);
  EXPECT_NE(pool_text.find("out_of_memory"), std::string::npos) << pool_text;
  EXPECT_NE(pool_text.find("Maximum pool size exceeded (failed to allocate 4."), std::string::npos)
    << pool_text;

  rmm::mr::limiting_resource_adaptor<rmm::mr::cuda_memory_resource> limited{&cuda, 1 << 20};
  auto const limit_text = oom_text(limited, std::size_t{2} << 20);
  EXPECT_NE(limit_text.find("Exceeded memory limit (failed to allocate 2."), std::string::npos)
    << limit_text;

  auto const huge      = std::size_t{1} << 50;
  auto const cuda_text = oom_text(cuda, huge);
  EXPECT_NE(cuda_text.find("(failed to allocate " + std::to_string(huge) + " bytes)"),
            std::string::npos)
    << cuda_text;

  rmm::mr::arena_memory_resource<rmm::mr::cuda_memory_resource> arena{&cuda, std::size_t{1} << 20};
  auto const arena_text = oom_text(arena, std::size_t{4} << 20);
  EXPECT_NE(arena_text.find("Maximum pool size exceeded (failed to allocate 4."), std::string::npos)
    << arena_text;
  EXPECT_NE(arena_text.find("No room in arena."), std::string::npos) << arena_text;

  rmm::mr::fixed_size_memory_resource<rmm::mr::cuda_memory_resource> fixed{&cuda, 1 << 16, 2};
  auto const fixed_text = oom_text(fixed, std::size_t{3} << 19);  // 1.5 MiB
  EXPECT_NE(fixed_text.find("Maximum allocation size exceeded (failed to allocate 1.5"),
            std::string::npos)
    << fixed_text;
}

}  // namespace
