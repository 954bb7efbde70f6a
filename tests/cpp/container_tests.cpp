// Containers (device_buffer, device_uvector, device_scalar): every member with a stream,
// round trips through host copies, moved-from state, bounds checks, remembered device.
#include "sync_free_resource.hpp"
#include "test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// Copies `bytes` of device memory to a host vector, synchronizing `stream`.
std::vector<std::uint8_t> to_host(void const* src, std::size_t bytes, rmm::cuda_stream_view stream)
{
  std::vector<std::uint8_t> out(bytes);
  if (bytes > 0) {
    EXPECT_EQ(rmm_memcpy_async(out.data(), src, bytes, rmm::detail::to_c_stream(stream.value())),
              RMM_STATUS_SUCCESS);
  }
  stream.synchronize();
  return out;
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed = 1)
{
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<std::uint8_t>(seed + i * 7);
  }
  return v;
}

class containers : public ::testing::Test {
 protected:
  // The default resource frees like hipFree (synchronizing): see sync_free_resource.hpp.
  void SetUp() override { rmm::mr::set_current_device_resource(&sync_free_); }
  void TearDown() override { rmm::mr::reset_current_device_resource(); }
  rmm_test::sync_free_resource sync_free_{};
  rmm::cuda_stream stream_{};
};

// ---- device_buffer -------------------------------------------------------------------------

TEST_F(containers, BufferDefaultIsEmpty)
{
  rmm::device_buffer buf;
  EXPECT_EQ(buf.data(), nullptr);
  EXPECT_EQ(buf.size(), 0U);
  EXPECT_EQ(buf.ssize(), 0);
  EXPECT_EQ(buf.capacity(), 0U);
  EXPECT_TRUE(buf.is_empty());
  EXPECT_EQ(buf.stream(), rmm::cuda_stream_view{});
  EXPECT_EQ(buf.memory_resource(), rmm::mr::get_current_device_resource());
}

TEST_F(containers, BufferSizeStreamResource)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  {
    rmm::device_buffer buf(1000, stream_, &counting);
    EXPECT_NE(buf.data(), nullptr);
    EXPECT_EQ(buf.size(), 1000U);
    EXPECT_EQ(buf.ssize(), 1000);
    EXPECT_EQ(buf.capacity(), 1000U);
    EXPECT_FALSE(buf.is_empty());
    EXPECT_EQ(buf.stream(), stream_.view());
    EXPECT_EQ(buf.memory_resource(), &counting);
    EXPECT_EQ(counting.allocations.load(), 1U);
    // Through the buffer's resource reference, as in RMM: 1000 rounded up to 16.
    EXPECT_EQ(counting.outstanding_bytes.load(), 1008U);
  }
  EXPECT_EQ(counting.deallocations.load(), 1U);
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
}

namespace {
/// A device resource with only the cuda::mr-style interface (no rmm base class), over device
/// memory from a cuda_memory_resource; it records what it was asked for.
struct plain_device_resource {
  rmm::mr::cuda_memory_resource* upstream{};
  std::size_t live_bytes{0};
  std::size_t last_alignment{0};
  void* allocate(std::size_t bytes, std::size_t alignment)
  {
    return allocate_async(bytes, alignment, rmm::cuda_stream_view{});
  }
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate_async(p, bytes, alignment, rmm::cuda_stream_view{});
  }
  void* allocate_async(std::size_t bytes, std::size_t alignment, rmm::cuda_stream_view stream)
  {
    live_bytes += bytes;
    last_alignment = alignment;
    return upstream->allocate(bytes, stream);
  }
  void deallocate_async(void* p,
                        std::size_t bytes,
                        std::size_t,
                        rmm::cuda_stream_view stream) noexcept
  {
    live_bytes -= bytes;
    upstream->deallocate(p, bytes, stream);
  }
  bool operator==(plain_device_resource const& other) const noexcept { return this == &other; }
};
}  // namespace

// RMM 25.02's containers hold a device_async_resource_ref: any resource with the stream-ordered
// interface serves them, not only a device_memory_resource, and memory_resource() gives the
// reference back.
TEST_F(containers, ContainersTakeAnyResourceThroughARef)
{
  static_assert(std::is_same_v<decltype(std::declval<rmm::device_buffer&>().memory_resource()),
                               rmm::device_async_resource_ref>);
  static_assert(
    std::is_same_v<decltype(std::declval<rmm::device_uvector<int>&>().memory_resource()),
                   rmm::device_async_resource_ref>);
  rmm::mr::cuda_memory_resource cuda;
  plain_device_resource plain{&cuda};
  rmm::device_async_resource_ref ref{plain};
  {
    rmm::device_buffer buf(100, stream_, ref);
    EXPECT_EQ(plain.live_bytes, 100U);
    EXPECT_EQ(plain.last_alignment, alignof(std::max_align_t));
    EXPECT_EQ(buf.memory_resource(), ref);
    std::vector<char> host(100, 7);
    rmm::device_buffer copy(host.data(), host.size(), stream_, ref);
    rmm::device_buffer copy2(copy, stream_, buf.memory_resource());
    std::vector<char> back(100, 0);
    ASSERT_EQ(
      rmm_memcpy_async(back.data(), copy2.data(), 100, rmm::detail::to_c_stream(stream_.value())),
      RMM_STATUS_SUCCESS);
    stream_.synchronize();
    EXPECT_EQ(back, host);
    EXPECT_EQ(plain.live_bytes, 300U);
    copy2.resize(200, stream_);  // grows through the same reference
    EXPECT_EQ(plain.live_bytes, 400U);
    rmm::device_uvector<int> v(10, stream_, ref);
    EXPECT_EQ(v.memory_resource(), ref);
    EXPECT_EQ(plain.live_bytes, 440U);
    rmm::device_scalar<double> sc(1.5, stream_, ref);
    EXPECT_EQ(sc.value(stream_), 1.5);
    EXPECT_EQ(plain.live_bytes, 448U);
  }
  EXPECT_EQ(plain.live_bytes, 0U);
}

TEST_F(containers, BufferDefaultResourceIsCurrent)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  rmm::mr::set_current_device_resource(&counting);
  {
    rmm::device_buffer buf(64, stream_);
    EXPECT_EQ(buf.memory_resource(), &counting);
    EXPECT_EQ(counting.allocations.load(), 1U);
  }
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
}

TEST_F(containers, BufferZeroSizeHasNullData)
{
  rmm::device_buffer buf(0, stream_);
  EXPECT_EQ(buf.data(), nullptr);
  EXPECT_TRUE(buf.is_empty());
  rmm::device_buffer copied(nullptr, 0, stream_);
  EXPECT_EQ(copied.data(), nullptr);
}

TEST_F(containers, BufferCopyFromHostRoundTrips)
{
  auto const host = pattern(4096);
  rmm::device_buffer buf(host.data(), host.size(), stream_);
  EXPECT_EQ(buf.size(), host.size());
  EXPECT_EQ(to_host(buf.data(), buf.size(), stream_), host);
}

TEST_F(containers, BufferCopyFromNullThrows)
{
  EXPECT_THROW(rmm::device_buffer(nullptr, 16, stream_), rmm::logic_error);
}

// A constructor that throws runs no destructor: whatever it allocated first must be given
// back before the exception leaves (compute-sanitizer --leak-check full found 16 bytes).
TEST_F(containers, ThrowingConstructorsGiveBackTheirMemory)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  EXPECT_THROW(rmm::device_buffer(nullptr, 16, stream_, &counting), rmm::logic_error);
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);

  // The copy itself fails: the stream was destroyed (RMM_STATUS_INVALID_ARGUMENT on every runtime).
  rmm_stream_t dead{};
  ASSERT_EQ(rmm_stream_create(0, &dead), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_stream_destroy(dead), RMM_STATUS_SUCCESS);
  auto const host = pattern(64);
  rmm::cuda_stream_view const dead_view{rmm::detail::from_c_stream(dead)};
  EXPECT_THROW(rmm::device_buffer(host.data(), host.size(), dead_view, &counting),
               rmm::logic_error);
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
  EXPECT_EQ(counting.allocations.load(), counting.deallocations.load());

  rmm::device_buffer const src(host.data(), host.size(), stream_, &counting);
  EXPECT_THROW(rmm::device_buffer(src, dead_view, &counting), rmm::logic_error);
  EXPECT_THROW(
    rmm::device_uvector<int>(rmm::device_uvector<int>(4, stream_, &counting), dead_view, &counting),
    rmm::logic_error);
  EXPECT_THROW(rmm::device_scalar<int>(5, dead_view, &counting), rmm::logic_error);
  stream_.synchronize();
  EXPECT_EQ(counting.outstanding_bytes.load(), src.capacity());
}

TEST_F(containers, BufferNullResourceThrows)
{
  EXPECT_THROW(rmm::device_buffer(16, stream_, nullptr), rmm::logic_error);
}

TEST_F(containers, BufferDeepCopyWithStream)
{
  auto const host = pattern(300, 9);
  rmm::device_buffer src(host.data(), host.size(), stream_);
  src.reserve(1000, stream_);
  stream_.synchronize();  // the copy below runs on another stream
  rmm::cuda_stream other_stream;
  rmm_test::sync_free_resource other_mr;
  rmm::device_buffer copy(src, other_stream, &other_mr);
  EXPECT_NE(copy.data(), src.data());
  EXPECT_EQ(copy.size(), src.size());
  EXPECT_EQ(copy.capacity(), src.size());
  EXPECT_EQ(copy.stream(), other_stream.view());
  EXPECT_EQ(copy.memory_resource(), &other_mr);
  EXPECT_EQ(to_host(copy.data(), copy.size(), other_stream), host);
}

TEST_F(containers, BufferMoveConstructLeavesSourceEmpty)
{
  auto const host = pattern(128);
  rmm::device_buffer src(host.data(), host.size(), stream_);
  void* const ptr = src.data();
  rmm::device_buffer dst(std::move(src));
  EXPECT_EQ(dst.data(), ptr);
  EXPECT_EQ(dst.size(), 128U);
  EXPECT_EQ(dst.stream(), stream_.view());
  // Moved-from: empty, size 0, null data, default stream.
  EXPECT_EQ(src.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(src.size(), 0U);
  EXPECT_EQ(src.capacity(), 0U);
  EXPECT_TRUE(src.is_empty());
  EXPECT_EQ(src.stream(), rmm::cuda_stream_view{});
  EXPECT_EQ(to_host(dst.data(), dst.size(), stream_), host);
  // A moved-from buffer can be reused.
  src.resize(10, stream_);
  EXPECT_EQ(src.size(), 10U);
  EXPECT_NE(src.data(), nullptr);
}

TEST_F(containers, BufferMoveAssignFreesOldAndLeavesSourceEmpty)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  rmm::device_buffer src(256, stream_, &counting);
  rmm::device_buffer dst(512, stream_, &counting);
  void* const ptr = src.data();
  dst             = std::move(src);
  EXPECT_EQ(counting.deallocations.load(), 1U);
  EXPECT_EQ(counting.outstanding_bytes.load(), 256U);
  EXPECT_EQ(dst.data(), ptr);
  EXPECT_EQ(dst.size(), 256U);
  EXPECT_EQ(src.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(src.size(), 0U);
  EXPECT_EQ(src.capacity(), 0U);
  auto& self = dst;
  dst        = std::move(self);
  EXPECT_EQ(dst.data(), ptr);
  static_assert(!std::is_copy_constructible<rmm::device_buffer>::value);
  static_assert(!std::is_copy_assignable<rmm::device_buffer>::value);
  static_assert(std::is_nothrow_move_constructible<rmm::device_buffer>::value);
}

TEST_F(containers, BufferResizeKeepsContents)
{
  auto const host = pattern(100);
  rmm::device_buffer buf(host.data(), host.size(), stream_);
  rmm::cuda_stream other;
  buf.resize(50, other);  // within capacity: no reallocation
  EXPECT_EQ(buf.size(), 50U);
  EXPECT_EQ(buf.capacity(), 100U);
  EXPECT_EQ(buf.stream(), other.view());
  void* const before = buf.data();
  buf.resize(100, stream_);
  EXPECT_EQ(buf.data(), before);
  buf.resize(400, stream_);  // grows: reallocates, keeps the first 100 bytes
  EXPECT_EQ(buf.size(), 400U);
  EXPECT_EQ(buf.capacity(), 400U);
  auto const back = to_host(buf.data(), 100, stream_);
  EXPECT_EQ(back, host);
  buf.resize(0, stream_);
  EXPECT_TRUE(buf.is_empty());
  EXPECT_EQ(buf.capacity(), 400U);
}

TEST_F(containers, BufferReserveAndShrinkToFit)
{
  auto const host = pattern(64, 3);
  rmm::device_buffer buf(host.data(), host.size(), stream_);
  buf.reserve(10, stream_);  // smaller: nothing happens
  EXPECT_EQ(buf.capacity(), 64U);
  buf.reserve(1024, stream_);
  EXPECT_EQ(buf.size(), 64U);
  EXPECT_EQ(buf.capacity(), 1024U);
  EXPECT_EQ(to_host(buf.data(), buf.size(), stream_), host);
  rmm::cuda_stream other;
  buf.shrink_to_fit(other);
  EXPECT_EQ(buf.capacity(), 64U);
  EXPECT_EQ(buf.stream(), other.view());
  EXPECT_EQ(to_host(buf.data(), buf.size(), other), host);
  buf.resize(0, other);
  buf.shrink_to_fit(other);
  EXPECT_EQ(buf.capacity(), 0U);
  EXPECT_EQ(buf.data(), nullptr);
}

TEST_F(containers, BufferSetStreamIsUsedForDeallocation)
{
  rmm::device_buffer buf(32, stream_);
  rmm::cuda_stream other;
  buf.set_stream(other);
  EXPECT_EQ(buf.stream(), other.view());
}

TEST_F(containers, BufferWorksOnDefaultAndPerThreadStreams)
{
  auto const host = pattern(77);
  for (auto stream :
       {rmm::cuda_stream_default, rmm::cuda_stream_legacy, rmm::cuda_stream_per_thread}) {
    rmm::device_buffer buf(host.data(), host.size(), stream);
    EXPECT_EQ(to_host(buf.data(), buf.size(), stream), host);
  }
}

// Two emulated devices (RMM_HOST_DEVICES=2 is set for this executable).
TEST_F(containers, BufferRemembersDeviceOfConstruction)
{
  if (rmm::get_num_cuda_devices() < 2) { GTEST_SKIP() << "needs 2 devices"; }
  rmm::cuda_device_id const dev0{0};
  rmm::cuda_device_id const dev1{1};
  ASSERT_EQ(rmm::get_current_cuda_device(), dev0);

  // A resource that records the current device at each call.
  class device_recording_resource final : public rmm::mr::device_memory_resource {
   public:
    explicit device_recording_resource(rmm::mr::device_memory_resource* up) : up_{up} {}
    std::vector<int> alloc_devices;
    std::vector<int> dealloc_devices;

   private:
    void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
    {
      alloc_devices.push_back(rmm::get_current_cuda_device().value());
      return up_->allocate(bytes, stream);
    }
    void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) override
    {
      dealloc_devices.push_back(rmm::get_current_cuda_device().value());
      up_->deallocate(ptr, bytes, stream);
    }
    rmm::mr::device_memory_resource* up_;
  };

  rmm_test::sync_free_resource upstream;  // stateless: allocates on the current device
  device_recording_resource rec{&upstream};
  {
    auto const host = pattern(100);
    rmm::device_buffer buf(host.data(), host.size(), rmm::cuda_stream_default, &rec);
    // Switch devices, then grow, shrink and free: all on device 0.
    ASSERT_EQ(rmm_set_current_device(1), RMM_STATUS_SUCCESS);
    buf.resize(1000, rmm::cuda_stream_default);
    EXPECT_EQ(rmm::get_current_cuda_device(), dev1);  // restored after the reallocation
    buf.resize(500, rmm::cuda_stream_default);
    buf.shrink_to_fit(rmm::cuda_stream_default);
    EXPECT_EQ(buf.capacity(), 500U);
    buf.reserve(5000, rmm::cuda_stream_default);
    EXPECT_EQ(to_host(buf.data(), 100, rmm::cuda_stream_default), host);
    EXPECT_EQ(rmm::get_current_cuda_device(), dev1);
  }
  EXPECT_EQ(rmm::get_current_cuda_device(), dev1);
  EXPECT_EQ(rec.alloc_devices, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(rec.dealloc_devices, (std::vector<int>{0, 0, 0, 0}));

  // A buffer made while device 1 is current frees on device 1.
  rec.alloc_devices.clear();
  rec.dealloc_devices.clear();
  {
    rmm::device_buffer buf1(64, rmm::cuda_stream_default, &rec);
    ASSERT_EQ(rmm_set_current_device(0), RMM_STATUS_SUCCESS);
    rmm::device_uvector<int> vec(16, rmm::cuda_stream_default, &rec);
    EXPECT_EQ(vec.size(), 16U);
  }
  EXPECT_EQ(rec.alloc_devices, (std::vector<int>{1, 0}));
  EXPECT_EQ(rec.dealloc_devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(rmm::get_current_cuda_device(), dev0);
}

// ---- device_uvector ------------------------------------------------------------------------

struct pod {
  int a;
  double b;
  bool operator==(pod const& o) const { return a == o.a && b == o.b; }
};

TEST_F(containers, UvectorTypesAndTraits)
{
  static_assert(std::is_same<rmm::device_uvector<int>::value_type, int>::value);
  static_assert(std::is_same<rmm::device_uvector<int>::iterator, int*>::value);
  static_assert(std::is_same<rmm::device_uvector<int>::const_iterator, int const*>::value);
  static_assert(!std::is_default_constructible<rmm::device_uvector<int>>::value);
  static_assert(!std::is_copy_constructible<rmm::device_uvector<int>>::value);
  static_assert(std::is_nothrow_move_constructible<rmm::device_uvector<int>>::value);
}

TEST_F(containers, UvectorSizeStreamResource)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  {
    rmm::device_uvector<std::int64_t> vec(100, stream_, &counting);
    EXPECT_EQ(vec.size(), 100U);
    EXPECT_EQ(vec.ssize(), 100);
    EXPECT_EQ(vec.capacity(), 100U);
    EXPECT_FALSE(vec.is_empty());
    EXPECT_EQ(vec.stream(), stream_.view());
    EXPECT_EQ(vec.memory_resource(), &counting);
    EXPECT_EQ(counting.outstanding_bytes.load(), 800U);
    EXPECT_NE(vec.data(), nullptr);
    EXPECT_EQ(vec.begin(), vec.data());
    EXPECT_EQ(vec.end(), vec.data() + 100);
    auto const& cvec = vec;
    EXPECT_EQ(cvec.cbegin(), cvec.data());
    EXPECT_EQ(cvec.cend(), cvec.data() + 100);
    EXPECT_EQ(cvec.begin(), cvec.cbegin());
    EXPECT_EQ(cvec.end(), cvec.cend());
    EXPECT_EQ(vec.element_ptr(3), vec.data() + 3);
  }
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
}

TEST_F(containers, UvectorSetElementAndElementRoundTrip)
{
  rmm::device_uvector<int> vec(10, stream_);
  for (int i = 0; i < 10; ++i) {
    vec.set_element(static_cast<std::size_t>(i), i * i + 1, stream_);
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(vec.element(static_cast<std::size_t>(i), stream_), i * i + 1);
  }
  EXPECT_EQ(vec.front_element(stream_), 1);
  EXPECT_EQ(vec.back_element(stream_), 82);
  std::vector<int> host(10);
  ASSERT_EQ(rmm_memcpy_async(
              host.data(), vec.data(), 10 * sizeof(int), rmm::detail::to_c_stream(stream_.value())),
            RMM_STATUS_SUCCESS);
  stream_.synchronize();
  EXPECT_EQ(host, (std::vector<int>{1, 2, 5, 10, 17, 26, 37, 50, 65, 82}));
}

TEST_F(containers, UvectorSetElementAsyncAndZero)
{
  rmm::device_uvector<double> vec(4, stream_);
  double const v0 = 1.5;
  double const v1 = -0.0;  // not all-zero bytes: copied, not memset
  double const v2 = 0.0;   // all-zero bytes: memset
  vec.set_element_async(0, v0, stream_);
  vec.set_element_async(1, v1, stream_);
  vec.set_element_async(2, v2, stream_);
  vec.set_element_async(3, v0, stream_);
  vec.set_element_to_zero_async(3, stream_);
  stream_.synchronize();
  EXPECT_EQ(vec.element(0, stream_), 1.5);
  double const e1 = vec.element(1, stream_);
  EXPECT_TRUE(std::signbit(e1));
  EXPECT_EQ(vec.element(2, stream_), 0.0);
  EXPECT_EQ(vec.element(3, stream_), 0.0);
  EXPECT_FALSE(std::signbit(vec.element(3, stream_)));
}

template <typename V, typename = void>
struct can_set_rvalue : std::false_type {
};
template <typename V>
struct can_set_rvalue<V,
                      std::void_t<decltype(std::declval<V&>().set_element_async(
                        std::size_t{0}, typename V::value_type{}, rmm::cuda_stream_view{}))>>
  : std::true_type {
};

TEST_F(containers, UvectorSetElementAsyncRvalueIsDeleted)
{
  static_assert(!can_set_rvalue<rmm::device_uvector<int>>::value);
}

TEST_F(containers, UvectorStructElements)
{
  rmm::device_uvector<pod> vec(3, stream_);
  pod const p{7, 2.25};
  vec.set_element(1, p, stream_);
  EXPECT_EQ(vec.element(1, stream_), p);
  vec.set_element_to_zero_async(2, stream_);
  EXPECT_EQ(vec.element(2, stream_), (pod{0, 0.0}));
}

TEST_F(containers, UvectorOutOfRangeThrows)
{
  rmm::device_uvector<int> vec(5, stream_);
  int const v = 3;
  EXPECT_THROW((void)vec.element(5, stream_), rmm::out_of_range);
  EXPECT_THROW((void)vec.element(100, stream_), rmm::out_of_range);
  EXPECT_THROW(vec.set_element(5, v, stream_), rmm::out_of_range);
  EXPECT_THROW(vec.set_element_async(5, v, stream_), rmm::out_of_range);
  EXPECT_THROW(vec.set_element_to_zero_async(5, stream_), rmm::out_of_range);
  rmm::device_uvector<int> empty(0, stream_);
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THROW((void)empty.front_element(stream_), rmm::out_of_range);
  EXPECT_THROW((void)empty.back_element(stream_), rmm::out_of_range);
  // rmm::out_of_range is a std::out_of_range.
  EXPECT_THROW((void)vec.element(5, stream_), std::out_of_range);
}

TEST_F(containers, UvectorCopyWithStream)
{
  rmm::device_uvector<int> src(8, stream_);
  for (int i = 0; i < 8; ++i) {
    src.set_element(static_cast<std::size_t>(i), 100 + i, stream_);
  }
  rmm::cuda_stream other;
  rmm_test::sync_free_resource mr;
  rmm::device_uvector<int> copy(src, other, &mr);
  EXPECT_EQ(copy.size(), 8U);
  EXPECT_NE(copy.data(), src.data());
  EXPECT_EQ(copy.stream(), other.view());
  EXPECT_EQ(copy.memory_resource(), &mr);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(copy.element(static_cast<std::size_t>(i), other), 100 + i);
  }
}

TEST_F(containers, UvectorMoveLeavesSourceEmpty)
{
  rmm::device_uvector<int> src(8, stream_);
  src.set_element(7, 42, stream_);
  int* const ptr = src.data();
  rmm::device_uvector<int> dst(std::move(src));
  EXPECT_EQ(dst.data(), ptr);
  EXPECT_EQ(dst.back_element(stream_), 42);
  EXPECT_EQ(src.size(), 0U);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(src.data(), nullptr);
  EXPECT_TRUE(src.is_empty());
  rmm::device_uvector<int> other(3, stream_);
  other = std::move(dst);
  EXPECT_EQ(other.data(), ptr);
  EXPECT_EQ(dst.size(), 0U);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(dst.data(), nullptr);
}

TEST_F(containers, UvectorResizeReserveShrink)
{
  rmm::device_uvector<std::int32_t> vec(4, stream_);
  for (int i = 0; i < 4; ++i) {
    vec.set_element(static_cast<std::size_t>(i), i + 10, stream_);
  }
  vec.reserve(100, stream_);
  EXPECT_EQ(vec.capacity(), 100U);
  EXPECT_EQ(vec.size(), 4U);
  vec.resize(50, stream_);
  EXPECT_EQ(vec.size(), 50U);
  EXPECT_EQ(vec.element(3, stream_), 13);
  vec.resize(2, stream_);
  EXPECT_EQ(vec.size(), 2U);
  EXPECT_EQ(vec.capacity(), 100U);
  rmm::cuda_stream other;
  vec.shrink_to_fit(other);
  EXPECT_EQ(vec.capacity(), 2U);
  EXPECT_EQ(vec.stream(), other.view());
  EXPECT_EQ(vec.element(0, other), 10);
  EXPECT_EQ(vec.back_element(other), 11);
  vec.set_stream(stream_);
  EXPECT_EQ(vec.stream(), stream_.view());
}

TEST_F(containers, UvectorReleaseReturnsBuffer)
{
  rmm::device_uvector<std::int16_t> vec(6, stream_);
  vec.set_element(5, std::int16_t{-3}, stream_);
  void* const ptr              = vec.data();
  rmm::device_buffer const buf = vec.release();
  EXPECT_EQ(buf.data(), ptr);
  EXPECT_EQ(buf.size(), 12U);
  EXPECT_EQ(buf.stream(), stream_.view());
  EXPECT_EQ(vec.size(), 0U);
  EXPECT_EQ(vec.data(), nullptr);
  std::int16_t last = 0;
  ASSERT_EQ(rmm_memcpy_async(&last,
                             static_cast<std::int16_t const*>(buf.data()) + 5,
                             sizeof(last),
                             rmm::detail::to_c_stream(stream_.value())),
            RMM_STATUS_SUCCESS);
  stream_.synchronize();
  EXPECT_EQ(last, -3);
}

TEST_F(containers, UvectorBool)
{
  rmm::device_uvector<bool> vec(3, stream_);
  vec.set_element(0, true, stream_);
  vec.set_element(1, false, stream_);
  vec.set_element_to_zero_async(2, stream_);
  EXPECT_TRUE(vec.element(0, stream_));
  EXPECT_FALSE(vec.element(1, stream_));
  EXPECT_FALSE(vec.element(2, stream_));
}

// ---- device_scalar -------------------------------------------------------------------------

template <typename S, typename = void>
struct can_set_value_rvalue : std::false_type {
};
template <typename S>
struct can_set_value_rvalue<S,
                            std::void_t<decltype(std::declval<S&>().set_value_async(
                              typename S::value_type{}, rmm::cuda_stream_view{}))>>
  : std::true_type {
};

TEST_F(containers, ScalarTraits)
{
  static_assert(!std::is_default_constructible<rmm::device_scalar<int>>::value);
  static_assert(!std::is_copy_constructible<rmm::device_scalar<int>>::value);
  static_assert(std::is_nothrow_move_constructible<rmm::device_scalar<int>>::value);
  static_assert(!can_set_value_rvalue<rmm::device_scalar<int>>::value);
  static_assert(std::is_same<rmm::device_scalar<float>::pointer, float*>::value);
}

TEST_F(containers, ScalarUninitializedThenSet)
{
  rmm_test::sync_free_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  {
    rmm::device_scalar<std::int64_t> s(stream_, &counting);
    EXPECT_NE(s.data(), nullptr);
    EXPECT_EQ(s.size(), 1U);
    EXPECT_EQ(s.stream(), stream_.view());
    EXPECT_EQ(counting.outstanding_bytes.load(), 16U);  // 8 rounded up to 16, as in RMM
    std::int64_t const v = -123456789012LL;
    s.set_value_async(v, stream_);
    EXPECT_EQ(s.value(stream_), v);
    s.set_value_to_zero_async(stream_);
    EXPECT_EQ(s.value(stream_), 0);
  }
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
}

TEST_F(containers, ScalarInitialValueCopyAndMove)
{
  double const init = 3.25;
  rmm::device_scalar<double> s(init, stream_);
  EXPECT_EQ(s.value(stream_), 3.25);
  rmm::cuda_stream other;
  rmm::device_scalar<double> copy(s, other);
  EXPECT_NE(copy.data(), s.data());
  EXPECT_EQ(copy.stream(), other.view());
  EXPECT_EQ(copy.value(other), 3.25);
  double const* ptr = copy.data();
  rmm::device_scalar<double> moved(std::move(copy));
  EXPECT_EQ(moved.data(), ptr);
  EXPECT_EQ(copy.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  moved.set_stream(stream_);
  EXPECT_EQ(moved.stream(), stream_.view());
  EXPECT_EQ(moved.value(stream_), 3.25);
  // data() const
  auto const& cs = moved;
  EXPECT_EQ(cs.data(), ptr);
  // device-side write observed through value()
  double const nine = 9.0;
  ASSERT_EQ(
    rmm_memcpy_async(moved.data(), &nine, sizeof(nine), rmm::detail::to_c_stream(stream_.value())),
    RMM_STATUS_SUCCESS);
  EXPECT_EQ(moved.value(stream_), 9.0);
}

}  // namespace

// hipMM 25.02 code passes resource references; containers take them as well as pointers.
TEST(ContainersWithRefs, ResourceReferencesAreAccepted)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, 1 << 20};
  rmm::device_async_resource_ref ref{pool};
  rmm::cuda_stream stream;

  rmm::device_buffer buf(1000, stream.view(), ref);
  EXPECT_EQ(buf.memory_resource(), &pool);
  rmm::device_buffer copy(buf, stream.view(), ref);
  EXPECT_EQ(copy.size(), 1000u);
  rmm::device_buffer current(64, stream.view(), rmm::mr::get_current_device_resource_ref());
  EXPECT_EQ(current.memory_resource(), rmm::mr::get_current_device_resource());

  rmm::device_uvector<int> v(100, stream.view(), ref);
  EXPECT_EQ(v.memory_resource(), &pool);
  v.set_element(7, 42, stream.view());
  rmm::device_uvector<int> w(v, stream.view(), ref);
  EXPECT_EQ(w.element(7, stream.view()), 42);

  rmm::device_scalar<double> d(2.5, stream.view(), ref);
  EXPECT_EQ(d.value(stream.view()), 2.5);
  rmm::device_scalar<double> e(stream.view(), ref);
  double const seven = 7.0;
  e.set_value_async(seven, stream.view());
  EXPECT_EQ(e.value(stream.view()), 7.0);
  stream.synchronize();
}
