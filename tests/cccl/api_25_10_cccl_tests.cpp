// RMM 25.10's CCCL-facing names, compiled as a 25.10 translation unit (RMM_API_VERSION=2510 on
// this target) against each CCCL release tests/cccl is built with: the polyfill concept names
// (CCCL 3.1 renamed the concepts), the cccl_*_resource_ref wrappers over CCCL's own reference
// types, and resources written against either interface behind rmm's references.
#include <rmm/cuda_stream.hpp>
#include <rmm/detail/cccl_adaptors.hpp>
#include <rmm/detail/cuda_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/host/new_delete_resource.hpp>
#include <rmm/mr/host/pinned_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include <cstddef>
#include <new>
#include <type_traits>

#if RMM_API_GENERATION != 2510
#error "api_25_10_cccl_tests.cpp must be compiled with RMM_API_VERSION=2510"
#endif
#if !defined(RMM_HAS_CUDA_MR)
#error "tests/cccl needs CCCL's cuda::mr interface"
#endif

namespace {

using cuda_mr           = rmm::mr::cuda_memory_resource;
using pool_mr           = rmm::mr::pool_memory_resource<cuda_mr>;
using stats_mr          = rmm::mr::statistics_resource_adaptor<cuda_mr>;
using device_accessible = cuda::mr::device_accessible;
using host_accessible   = cuda::mr::host_accessible;

namespace polyfill = rmm::detail::polyfill;

static_assert(polyfill::resource<cuda_mr>);
static_assert(polyfill::async_resource<cuda_mr>);
static_assert(polyfill::resource_with<cuda_mr, device_accessible>);
static_assert(polyfill::async_resource_with<pool_mr, device_accessible>);
static_assert(polyfill::async_resource_with<rmm::mr::device_memory_resource, device_accessible>);
static_assert(polyfill::resource_with<rmm::mr::new_delete_resource, host_accessible>);
static_assert(!polyfill::resource_with<rmm::mr::new_delete_resource, device_accessible>);
static_assert(polyfill::resource_with<rmm::mr::pinned_memory_resource, host_accessible>);
static_assert(polyfill::async_resource_with<rmm::mr::pinned_memory_resource,
                                            host_accessible,
                                            device_accessible>);
static_assert(polyfill::async_resource_with<rmm::mr::pinned_host_memory_resource,
                                            device_accessible,
                                            host_accessible>);
// rmm's references are resources of their kind too.
static_assert(polyfill::async_resource_with<rmm::device_async_resource_ref, device_accessible>);
static_assert(polyfill::resource_with<rmm::host_resource_ref, host_accessible>);

// The polyfill names are CCCL's concepts under the release's spelling.
#if defined(RMM_CUDA_MR_SYNC_NAMES)
static_assert(polyfill::resource<cuda_mr> == cuda::mr::synchronous_resource<cuda_mr>);
static_assert(polyfill::async_resource<cuda_mr> == cuda::mr::resource<cuda_mr>);
using cccl_device_async_ref = cuda::mr::resource_ref<device_accessible>;
using cccl_host_ref         = cuda::mr::synchronous_resource_ref<host_accessible>;
#else
static_assert(polyfill::resource<cuda_mr> == cuda::mr::resource<cuda_mr>);
static_assert(polyfill::async_resource<cuda_mr> == cuda::mr::async_resource<cuda_mr>);
using cccl_device_async_ref = cuda::mr::async_resource_ref<device_accessible>;
using cccl_host_ref         = cuda::mr::resource_ref<host_accessible>;
#endif

/// Written against CCCL 3.1's interface only (the shape of RMM 25.10's pool test resource).
struct new_style_resource {
  int allocations{0};
  void* allocate_sync(std::size_t bytes, std::size_t)
  {
    ++allocations;
    return ::operator new(bytes);
  }
  void deallocate_sync(void* ptr, std::size_t, std::size_t) noexcept
  {
    --allocations;
    ::operator delete(ptr);
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment)
  {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate_sync(ptr, bytes, alignment);
  }
  bool operator==(new_style_resource const& other) const noexcept { return this == &other; }
  bool operator!=(new_style_resource const& other) const noexcept { return this != &other; }
  friend void get_property(new_style_resource const&, device_accessible) noexcept {}
};

/// A movable device resource with both interfaces (CCCL 3.1's references hold resources that
/// can be moved), counting what reaches it.
struct counting_resource {
  int* live;
  void* allocate(std::size_t bytes, std::size_t)
  {
    ++*live;
    return ::operator new(bytes);
  }
  void deallocate(void* ptr, std::size_t, std::size_t) noexcept
  {
    --*live;
    ::operator delete(ptr);
  }
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref)
  {
    return allocate(bytes, alignment);
  }
  void deallocate_async(void* ptr, std::size_t bytes, std::size_t alignment, cuda::stream_ref)
  {
    deallocate(ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment)
  {
    return allocate(bytes, alignment);
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate(ptr, bytes, alignment);
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment)
  {
    return allocate(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate(ptr, bytes, alignment);
  }
  bool operator==(counting_resource const& other) const noexcept { return live == other.live; }
  bool operator!=(counting_resource const& other) const noexcept { return live != other.live; }
  friend void get_property(counting_resource const&, device_accessible) noexcept {}
  friend void get_property(counting_resource const&, host_accessible) noexcept {}
};

TEST(Api2510Cccl, WrapperOverCcclsOwnReference)
{
  int live = 0;
  counting_resource res{&live};
  rmm::cuda_stream stream;
  rmm::detail::cccl_async_resource_ref<cccl_device_async_ref> const ref{res};

  void* a = ref.allocate_async(100, stream.view());
  void* b = ref.allocate(stream.view(), 100, 256);
  void* c = ref.allocate_sync(100);
  void* d = ref.allocate(100);
  EXPECT_EQ(live, 4);
  ref.deallocate_async(a, 100, stream.view());
  ref.deallocate(stream.view(), b, 100, 256);
  ref.deallocate_sync(c, 100);
  ref.deallocate(d, 100);
  EXPECT_EQ(live, 0);

  rmm::detail::cccl_resource_ref<cccl_host_ref> host_ref{res};
  void* h = host_ref.allocate(64, 16);
  EXPECT_EQ(live, 1);
  host_ref.deallocate_sync(h, 64, 16);
  EXPECT_EQ(live, 0);
}

TEST(Api2510Cccl, ResourcesTakeCcclStreams)
{
  cuda_mr upstream;
  stats_mr mr{&upstream};
  rmm::cuda_stream stream;
  cuda::stream_ref cccl_stream{stream.value()};
  void* p = mr.allocate(cccl_stream, 512);
  EXPECT_EQ(mr.get_bytes_counter().value, 512);
  mr.deallocate(cccl_stream, p, 512);
  rmm::device_async_resource_ref ref{mr};
  p = ref.allocate(stream.view(), 128);
  ref.deallocate(stream.view(), p, 128);
  EXPECT_EQ(mr.get_allocations_counter().total, 2);
  stream.synchronize();
}

TEST(Api2510Cccl, NewStyleResourceBehindRmmReferences)
{
  new_style_resource res;
  rmm::device_async_resource_ref ref{res};
  rmm::cuda_stream stream;
  void* a = ref.allocate_async(32, stream.view());
  void* b = ref.allocate_sync(32);
  EXPECT_EQ(res.allocations, 2);
  ref.deallocate_async(a, 32, stream.view());
  ref.deallocate_sync(b, 32);
  EXPECT_EQ(res.allocations, 0);
  rmm::device_async_resource_ref copy = ref;
  EXPECT_EQ(copy, ref);
}

}  // namespace
