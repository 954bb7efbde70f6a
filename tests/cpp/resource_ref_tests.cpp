// rmm/resource_ref.hpp and the _ref forms of the per-device resource functions.
#include "test_resources.hpp"

#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/host/new_delete_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>

namespace {

static_assert(std::is_copy_constructible_v<rmm::device_async_resource_ref>);
static_assert(std::is_trivially_copyable_v<rmm::device_async_resource_ref>);
static_assert(
  std::is_convertible_v<rmm::mr::cuda_memory_resource&, rmm::device_async_resource_ref>);
static_assert(
  std::is_convertible_v<rmm::mr::cuda_memory_resource*, rmm::device_async_resource_ref>);
static_assert(std::is_convertible_v<rmm::mr::device_memory_resource*, rmm::device_resource_ref>);
static_assert(std::is_convertible_v<rmm::mr::new_delete_resource&, rmm::host_resource_ref>);
static_assert(
  !std::is_convertible_v<rmm::mr::new_delete_resource&, rmm::device_async_resource_ref>);
static_assert(std::is_convertible_v<rmm::device_async_resource_ref, rmm::device_resource_ref>);
static_assert(!std::is_convertible_v<rmm::device_resource_ref, rmm::device_async_resource_ref>);
static_assert(
  std::is_convertible_v<rmm::host_device_async_resource_ref, rmm::device_async_resource_ref>);
static_assert(std::is_convertible_v<rmm::host_device_async_resource_ref, rmm::host_resource_ref>);
static_assert(
  !std::is_convertible_v<rmm::device_async_resource_ref, rmm::host_device_async_resource_ref>);

/// A resource written against the cuda::mr-style interface (no rmm base class).
struct duck_resource {
  int id{0};
  int allocations{0};
  void* allocate(std::size_t bytes, std::size_t)
  {
    ++allocations;
    return ::operator new(bytes);
  }
  void deallocate(void* p, std::size_t, std::size_t) noexcept { ::operator delete(p); }
  void* allocate_async(std::size_t bytes, std::size_t alignment, rmm::cuda_stream_view)
  {
    return allocate(bytes, alignment);
  }
  void deallocate_async(void* p, std::size_t b, std::size_t a, rmm::cuda_stream_view) noexcept
  {
    deallocate(p, b, a);
  }
  bool operator==(duck_resource const& other) const noexcept { return id == other.id; }
};

TEST(ResourceRef, FromPointerAndReferenceCompareEqual)
{
  rmm::mr::cuda_memory_resource mr;
  rmm::device_async_resource_ref from_ref{mr};
  rmm::device_async_resource_ref from_ptr{&mr};
  EXPECT_EQ(from_ref, from_ptr);
  EXPECT_TRUE(from_ref == from_ptr);
  EXPECT_FALSE(from_ref != from_ptr);
  // Through the base class too.
  rmm::mr::device_memory_resource* base = &mr;
  EXPECT_EQ(from_ref, rmm::device_async_resource_ref{base});
  EXPECT_EQ(from_ref.as_device_memory_resource(), base);
  // Comparing with a resource directly converts it.
  EXPECT_TRUE(from_ref == mr);
}

TEST(ResourceRef, EqualityFollowsIsEqual)
{
  // Two cuda_memory_resources are interchangeable (is_equal), so their refs compare equal.
  rmm::mr::cuda_memory_resource a;
  rmm::mr::cuda_memory_resource b;
  EXPECT_EQ(a.is_equal(b), rmm::device_async_resource_ref{a} == rmm::device_async_resource_ref{b});
  // Two pools are distinct.
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> p1{&a, 1 << 20};
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> p2{&a, 1 << 20};
  EXPECT_NE(rmm::device_async_resource_ref{p1}, rmm::device_async_resource_ref{p2});
  EXPECT_EQ(rmm::device_async_resource_ref{p1}, rmm::device_async_resource_ref{&p1});
}

TEST(ResourceRef, AllocateDeallocateThroughRefs)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  rmm::device_async_resource_ref ref{mr};

  void* p = ref.allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rmm::is_pointer_aligned(p));
  ref.deallocate(p, 1000);

  void* q = ref.allocate_async(512, rmm::cuda_stream_view{});
  ASSERT_NE(q, nullptr);
  ref.deallocate_async(q, 512, rmm::cuda_stream_view{});

  void* r = ref.allocate_async(300, 128, rmm::cuda_stream_per_thread);
  ASSERT_NE(r, nullptr);
  ref.deallocate_async(r, 300, 128, rmm::cuda_stream_per_thread);

  // Alignments above 256 are passed to device_memory_resource::allocate_async.
  void* big = ref.allocate(100, 1024);
  ASSERT_NE(big, nullptr);
  ref.deallocate(big, 100, 1024);

  EXPECT_EQ(mr.allocations.load(), 4U);
  EXPECT_EQ(mr.deallocations.load(), 4U);
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);

  // As with CCCL's references in RMM 25.02, a reference asks for alignof(std::max_align_t)
  // when given no alignment, and the resource sees the size rounded up to it.
  void* s = ref.allocate_async(777, rmm::cuda_stream_view{});
  EXPECT_EQ(mr.outstanding_bytes.load(), 784U);
  ref.deallocate_async(s, 777, rmm::cuda_stream_view{});
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
  void* h = ref.allocate(100);
  EXPECT_EQ(mr.outstanding_bytes.load(), 112U);
  ref.deallocate(h, 100);
  // An explicit alignment rounds to it instead.
  void* w = ref.allocate_async(300, 128, rmm::cuda_stream_view{});
  EXPECT_EQ(mr.outstanding_bytes.load(), 384U);
  ref.deallocate_async(w, 300, 128, rmm::cuda_stream_view{});
  // Mixing pointer and ref use sees the same sizes when they are multiples of 16.
  void* m = mr.allocate(784);
  ref.deallocate_async(m, 784, rmm::cuda_stream_view{});
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);

  EXPECT_THROW((void)ref.allocate(64, 3), rmm::logic_error);

  rmm::device_resource_ref sync_ref{ref};
  void* t = sync_ref.allocate(64);
  sync_ref.deallocate(t, 64);
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
}

TEST(ResourceRef, HostResourceRef)
{
  rmm::mr::new_delete_resource mr;
  rmm::host_resource_ref ref{mr};
  EXPECT_EQ(ref, rmm::host_resource_ref{&mr});
  void* p = ref.allocate(128, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rmm::is_aligned(p, 64));
  std::memset(p, 0xab, 128);
  ref.deallocate(p, 128, 64);
  EXPECT_EQ(ref.as_device_memory_resource(), nullptr);
}

TEST(ResourceRef, HostDeviceRefFromPinnedAndManaged)
{
  rmm::mr::pinned_host_memory_resource pinned;
  rmm::host_device_async_resource_ref ref{pinned};
  void* p = ref.allocate_async(256, rmm::cuda_stream_view{});
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 256);  // pinned host memory is host accessible on every runtime
  ref.deallocate_async(p, 256, rmm::cuda_stream_view{});
  rmm::device_async_resource_ref as_device{ref};
  rmm::host_resource_ref as_host{ref};
  EXPECT_EQ(as_device, rmm::device_async_resource_ref{pinned});
  EXPECT_EQ(as_host, rmm::host_resource_ref{ref});
}

TEST(ResourceRef, DuckTypedResource)
{
  duck_resource a{1};
  duck_resource b{1};
  duck_resource c{2};
  rmm::device_async_resource_ref ra{a};
  EXPECT_EQ(ra, rmm::device_async_resource_ref{b});
  EXPECT_NE(ra, rmm::device_async_resource_ref{c});
  void* p = ra.allocate_async(64, rmm::cuda_stream_view{});
  ra.deallocate_async(p, 64, rmm::cuda_stream_view{});
  EXPECT_EQ(a.allocations, 1);
  EXPECT_EQ(ra.as_device_memory_resource(), nullptr);
  // Different resource kinds never compare equal.
  rmm::mr::cuda_memory_resource cuda;
  EXPECT_NE(ra, rmm::device_async_resource_ref{cuda});
}

TEST(ResourceRef, CheckedNullThrowsLogicError)
{
  EXPECT_THROW((void)rmm::to_device_async_resource_ref_checked(nullptr), rmm::logic_error);
  rmm::mr::cuda_memory_resource mr;
  EXPECT_EQ(rmm::to_device_async_resource_ref_checked(&mr), rmm::device_async_resource_ref{mr});
}

class per_device_ref : public ::testing::Test {
 protected:
  void TearDown() override { rmm::mr::reset_current_device_resource(); }
};

TEST_F(per_device_ref, CurrentRefWrapsCurrentResource)
{
  auto ref = rmm::mr::get_current_device_resource_ref();
  EXPECT_EQ(ref.as_device_memory_resource(), rmm::mr::get_current_device_resource());
  EXPECT_EQ(ref, rmm::device_async_resource_ref{rmm::mr::get_current_device_resource()});
  void* p = ref.allocate_async(1024, rmm::cuda_stream_view{});
  ASSERT_NE(p, nullptr);
  ref.deallocate_async(p, 1024, rmm::cuda_stream_view{});
}

TEST_F(per_device_ref, SetAndResetRoundTrip)
{
  auto* initial = rmm::mr::get_current_device_resource();
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};

  auto previous = rmm::mr::set_current_device_resource_ref(mr);
  EXPECT_EQ(previous.as_device_memory_resource(), initial);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &mr);
  EXPECT_EQ(rmm::mr::get_current_device_resource_ref(), rmm::device_async_resource_ref{mr});

  // C code allocating from the current resource reaches the subclass.
  void* p                = nullptr;
  rmm_resource_t current = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&current), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_allocate(current, 64, &p), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_deallocate(current, p, 64), RMM_STATUS_SUCCESS);
  (void)rmm_resource_release(current);
  EXPECT_EQ(mr.allocations.load(), 1U);

  auto was = rmm::mr::reset_current_device_resource_ref();
  EXPECT_EQ(was.as_device_memory_resource(), &mr);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), initial);
}

TEST_F(per_device_ref, PerDeviceForms)
{
  auto const dev = rmm::get_current_cuda_device();
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  auto* initial = rmm::mr::get_per_device_resource(dev);
  EXPECT_EQ(rmm::mr::get_per_device_resource_ref(dev).as_device_memory_resource(), initial);
  auto previous = rmm::mr::set_per_device_resource_ref(dev, rmm::device_async_resource_ref{&mr});
  EXPECT_EQ(previous.as_device_memory_resource(), initial);
  EXPECT_EQ(rmm::mr::get_per_device_resource_ref(dev), rmm::device_async_resource_ref{mr});
  EXPECT_EQ(rmm::mr::get_per_device_resource(dev), &mr);
  auto was = rmm::mr::reset_per_device_resource_ref(dev);
  EXPECT_EQ(was, rmm::device_async_resource_ref{mr});
  EXPECT_EQ(rmm::mr::get_per_device_resource(dev), initial);
  EXPECT_THROW((void)rmm::mr::get_per_device_resource_ref(rmm::cuda_device_id{-1}),
               rmm::logic_error);
}

TEST_F(per_device_ref, RefToNonDeviceResourceIsRejected)
{
  duck_resource duck;
  EXPECT_THROW((void)rmm::mr::set_current_device_resource_ref(duck), rmm::logic_error);
}

}  // namespace
