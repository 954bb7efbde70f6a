// CCCL conformance (issue #10, item 2): with CCCL's <cuda/memory_resource> present, every rmm
// resource satisfies the `cuda::mr` concepts with the properties RMM 25.02 gives it, `cuda::mr`
// names are usable after including rmm headers (no flag defined by the user), CCCL's own
// resource references wrap our resources, and rmm's references wrap user types that only
// have the `cuda::mr` interface. Built in CI against CCCL 2.7, 2.8, 3.0 and a newer 3.x
// (scripts/setup-cccl.sh), and with nvcc on the GPU machine. Without CCCL the file checks
// that rmm's headers do not need it.
#include <rmm/mr/device/aligned_resource_adaptor.hpp>
#include <rmm/mr/device/arena_memory_resource.hpp>
#include <rmm/mr/device/binning_memory_resource.hpp>
#include <rmm/mr/device/callback_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/device/fixed_size_memory_resource.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>
#include <rmm/mr/device/managed_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/prefetch_resource_adaptor.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/device/tracking_resource_adaptor.hpp>
#include <rmm/mr/host/new_delete_resource.hpp>
#include <rmm/mr/host/pinned_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

using cuda_mr  = rmm::mr::cuda_memory_resource;
using pool_mr  = rmm::mr::pool_memory_resource<rmm::mr::device_memory_resource>;
using stats_mr = rmm::mr::statistics_resource_adaptor<rmm::mr::device_memory_resource>;
constexpr std::size_t pool_bytes = std::size_t{1} << 22;

#if defined(RMM_HAS_CUDA_MR)

// The concept names of the CCCL in use: up to 3.0 the stream-ordered concept is
// `async_resource_with` and the synchronous one `resource_with`; 3.1 renamed them to
// `resource_with` and `synchronous_resource_with`.
#if defined(RMM_CUDA_MR_SYNC_NAMES)
template <typename R, typename... P>
inline constexpr bool async_with = cuda::mr::resource_with<R, P...>;
template <typename R, typename... P>
inline constexpr bool sync_with = cuda::mr::synchronous_resource_with<R, P...>;
template <typename... P>
using cccl_async_ref = cuda::mr::resource_ref<P...>;
#else
template <typename R, typename... P>
inline constexpr bool async_with = cuda::mr::async_resource_with<R, P...>;
template <typename R, typename... P>
inline constexpr bool sync_with = cuda::mr::resource_with<R, P...>;
template <typename... P>
using cccl_async_ref = cuda::mr::async_resource_ref<P...>;
#endif

using cuda::mr::device_accessible;
using cuda::mr::host_accessible;

// Every device resource and adaptor, as RMM 25.02's static_asserts state them.
static_assert(async_with<rmm::mr::device_memory_resource, device_accessible>);
static_assert(async_with<cuda_mr, device_accessible>);
static_assert(async_with<rmm::mr::managed_memory_resource, device_accessible>);
static_assert(async_with<rmm::mr::cuda_async_memory_resource, device_accessible>);
static_assert(async_with<pool_mr, device_accessible>);
static_assert(async_with<rmm::mr::arena_memory_resource<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::binning_memory_resource<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::fixed_size_memory_resource<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::callback_memory_resource, device_accessible>);
static_assert(async_with<stats_mr, device_accessible>);
static_assert(async_with<rmm::mr::tracking_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::limiting_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::logging_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::aligned_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::thread_safe_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::prefetch_resource_adaptor<cuda_mr>, device_accessible>);
static_assert(async_with<rmm::mr::failure_callback_resource_adaptor<cuda_mr>, device_accessible>);
// Pinned memory is both; host resources are host accessible.
static_assert(async_with<rmm::mr::pinned_host_memory_resource, device_accessible, host_accessible>);
static_assert(sync_with<rmm::mr::new_delete_resource, host_accessible>);
static_assert(sync_with<rmm::mr::pinned_memory_resource, host_accessible, device_accessible>);
// rmm's references are resources too.
static_assert(async_with<rmm::device_async_resource_ref, device_accessible>);
static_assert(sync_with<rmm::host_resource_ref, host_accessible>);
static_assert(async_with<rmm::host_device_async_resource_ref, host_accessible, device_accessible>);

/// A resource written against the `cuda::mr` interface only (as user code and gmock mocks
/// are): it is not a device_memory_resource and counts what it is asked.
class cccl_style_resource {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment)
  {
    ++sync_allocations;
    return aligned(bytes, alignment);
  }
  void deallocate(void* ptr, std::size_t, std::size_t) noexcept { std::free(ptr); }
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref)
  {
    ++async_allocations;
    return aligned(bytes, alignment);
  }
  void deallocate_async(void* ptr, std::size_t, std::size_t, cuda::stream_ref) noexcept
  {
    ++async_deallocations;
    std::free(ptr);
  }
  // CCCL 3.1's names of the same operations.
  void* allocate_sync(std::size_t bytes, std::size_t alignment)
  {
    return allocate(bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate(ptr, bytes, alignment);
  }
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment)
  {
    return allocate_async(bytes, alignment, stream);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept
  {
    deallocate_async(ptr, bytes, alignment, stream);
  }
  bool operator==(cccl_style_resource const& other) const noexcept { return this == &other; }
  bool operator!=(cccl_style_resource const& other) const noexcept { return this != &other; }
  friend void get_property(cccl_style_resource const&, cuda::mr::device_accessible) noexcept {}

  int sync_allocations{0};
  int async_allocations{0};
  int async_deallocations{0};

 private:
  static void* aligned(std::size_t bytes, std::size_t alignment)
  {
    void* ptr = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (ptr == nullptr) { throw std::bad_alloc{}; }
    return ptr;
  }
};
static_assert(async_with<cccl_style_resource, device_accessible>);

TEST(CcclConformance, CudaMrNamesUsableWithoutFlag)
{
  // Reaching here means the names compiled; the properties are distinct types.
  EXPECT_FALSE((std::is_same_v<cuda::mr::device_accessible, cuda::mr::host_accessible>));
  EXPECT_TRUE((cuda::has_property<cuda_mr, cuda::mr::device_accessible>));
  EXPECT_FALSE((cuda::has_property<cuda_mr, cuda::mr::host_accessible>));
}

TEST(CcclConformance, CcclReferenceWrapsRmmResources)
{
  pool_mr pool{rmm::mr::get_current_device_resource_ref(), pool_bytes};
#if defined(RMM_CUDA_MR_SYNC_NAMES)
  // CCCL 3.1's references hold resources in a `basic_any`, which wants movable types; the pool
  // is not (in RMM either), so it is reached through rmm's reference, which is.
  rmm::device_async_resource_ref pool_ref{pool};
  cccl_async_ref<cuda::mr::device_accessible> ref{pool_ref};
  cuda_mr plain;
  cccl_async_ref<cuda::mr::device_accessible> plain_ref{plain};
  void* plain_ptr = plain_ref.allocate_sync(64, 256);
  plain_ref.deallocate_sync(plain_ptr, 64, 256);
#else
  cccl_async_ref<cuda::mr::device_accessible> ref{pool};
#endif
#if defined(RMM_CUDA_MR_SYNC_NAMES)
  void* ptr = ref.allocate_sync(1000, 256);
  EXPECT_NE(ptr, nullptr);
  ref.deallocate_sync(ptr, 1000, 256);
  void* async_ptr = ref.allocate(cuda::stream_ref{rmm::cuda_stream_default.value()}, 512, 256);
  ref.deallocate(cuda::stream_ref{rmm::cuda_stream_default.value()}, async_ptr, 512, 256);
#else
  void* ptr = ref.allocate(1000, 256);
  EXPECT_NE(ptr, nullptr);
  ref.deallocate(ptr, 1000, 256);
  void* async_ptr =
    ref.allocate_async(512, 256, cuda::stream_ref{rmm::cuda_stream_default.value()});
  ref.deallocate_async(async_ptr, 512, 256, cuda::stream_ref{rmm::cuda_stream_default.value()});
#endif
  EXPECT_NE(async_ptr, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(async_ptr) % 256, 0U);
}

TEST(CcclConformance, RmmReferenceFromCcclOnlyType)
{
  cccl_style_resource user;
  rmm::device_async_resource_ref ref{user};
  void* ptr = ref.allocate_async(100, rmm::cuda_stream_default);
  ASSERT_NE(ptr, nullptr);
  ref.deallocate_async(ptr, 100, rmm::cuda_stream_default);
  EXPECT_EQ(user.async_allocations, 1);
  EXPECT_EQ(user.async_deallocations, 1);
  void* sync_ptr = ref.allocate(64);
  ref.deallocate(sync_ptr, 64);
  EXPECT_EQ(user.sync_allocations, 1);
  EXPECT_EQ(ref, rmm::device_async_resource_ref{user});
}

TEST(CcclConformance, CcclOnlyTypeAsUpstreamOfPoolAndAdaptors)
{
  cccl_style_resource user;
  {
    rmm::mr::pool_memory_resource<cccl_style_resource> pool{&user, pool_bytes};
    EXPECT_EQ(pool.get_upstream_resource(), rmm::device_async_resource_ref{user});
    stats_mr stats{rmm::device_async_resource_ref{pool}};
    void* ptr = stats.allocate(4096, rmm::cuda_stream_default);
    stats.deallocate(ptr, 4096, rmm::cuda_stream_default);
    EXPECT_EQ(stats.get_allocations_counter().total, 1);
  }
  // The pool's initial reservation went through the user's stream-ordered function and came
  // back when the pool was destroyed.
  EXPECT_GE(user.async_allocations, 1);
  EXPECT_EQ(user.async_allocations, user.async_deallocations);
}

TEST(CcclConformance, StreamRefConvertsBothWays)
{
  rmm::cuda_stream_view view{rmm::cuda_stream_default};
  cuda::stream_ref ref = view;
  rmm::cuda_stream_view back{ref};
  EXPECT_EQ(back.value(), view.value());
  cuda_mr mr;
  void* ptr = mr.allocate_async(256, 256, ref);
  mr.deallocate_async(ptr, 256, 256, ref);
}

#else

TEST(CcclConformance, HeadersNeedNoCccl)
{
  // Built without CCCL: the rmm headers compiled, and resources still work through refs.
  pool_mr pool{rmm::mr::get_current_device_resource_ref(), pool_bytes};
  rmm::device_async_resource_ref ref{pool};
  void* ptr = ref.allocate_async(100, rmm::cuda_stream_default);
  EXPECT_NE(ptr, nullptr);
  ref.deallocate_async(ptr, 100, rmm::cuda_stream_default);
}

#endif

}  // namespace
