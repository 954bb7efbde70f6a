// RMM 26.06's containers, streams, references, errors and utilities (RMM_API_VERSION=2606,
// C++20, CCCL >= 3.4), on the host runtime: resource refs are CCCL's own types, containers keep
// their resource as a cuda::mr::any_resource, device_buffer alignment, rmm::invalid_argument,
// cuda_stream <-> cuda::stream_ref, process_is_exiting, polymorphic/thrust allocators.
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/runtime_shutdown.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include "counting_resource.hpp"

#include <thrust/fill.h>
#include <thrust/reduce.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if RMM_API_GENERATION != 2606
#error "api_26_06_tests.cpp must be compiled with RMM_API_VERSION=2606"
#endif

namespace {

using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

// ---------------------------------------------------------------------------------------------
// Resource references

TEST(Api2606ResourceRef, AliasesAreCcclTypes)
{
  static_assert(std::is_same_v<rmm::device_async_resource_ref,
                               cuda::mr::resource_ref<cuda::mr::device_accessible>>);
  static_assert(std::is_same_v<rmm::device_resource_ref,
                               cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>>);
  static_assert(std::is_same_v<rmm::host_resource_ref,
                               cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible>>);
  static_assert(std::is_same_v<rmm::host_async_resource_ref,
                               cuda::mr::resource_ref<cuda::mr::host_accessible>>);
  static_assert(
    std::is_same_v<
      rmm::host_device_resource_ref,
      cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>>);
  static_assert(
    std::is_same_v<rmm::host_device_async_resource_ref,
                   cuda::mr::resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>>);
  static_assert(
    std::is_constructible_v<rmm::device_async_resource_ref, rmm::host_device_async_resource_ref>);
  static_assert(
    !std::is_constructible_v<rmm::host_device_async_resource_ref, rmm::device_async_resource_ref>);
  // A device-only resource is no host resource.
  static_assert(!std::is_constructible_v<rmm::host_async_resource_ref, counting_resource&>);
}

TEST(Api2606ResourceRef, ResourceCastRecoversTheResource)
{
  counting_resource res;
  rmm::device_async_resource_ref ref{res};
  counting_resource* back = cuda::mr::resource_cast<counting_resource>(&ref);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back, &res);
  EXPECT_EQ(cuda::mr::resource_cast<rmm::mr::cuda_memory_resource>(&ref), nullptr);

  any_device_resource owned{res};
  counting_resource* inside = cuda::mr::resource_cast<counting_resource>(&owned);
  ASSERT_NE(inside, nullptr);
  EXPECT_EQ(inside->counts, res.counts);  // a copy sharing the counters
}

TEST(Api2606ResourceRef, StreamFirstCallsWithRmmStreams)
{
  counting_resource res;
  rmm::device_async_resource_ref ref{res};
  rmm::cuda_stream stream;
  rmm::cuda_stream_view view = stream.view();

  // CCCL 3.4 deprecates the forms without an alignment, but they still compile and work.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  void* p1 = ref.allocate(view, 1000);
#pragma GCC diagnostic pop
  void* p2 = ref.allocate(view, 512, 4096);
  EXPECT_EQ(res.counts->last_alignment, 4096u);
  EXPECT_EQ(res.counts->allocations, 2);
  ref.deallocate(view, p2, 512, 4096);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  ref.deallocate(view, p1, 1000);
#pragma GCC diagnostic pop
  // The owning stream converts to cuda::stream_ref as well.
  void* p3 = ref.allocate(stream, 64, 256);
  ref.deallocate(stream, p3, 64, 256);
  void* p4 = ref.allocate_sync(128, 256);
  ref.deallocate_sync(p4, 128, 256);
  stream.synchronize();
  EXPECT_EQ(res.counts->allocations, 4);
  EXPECT_EQ(res.counts->deallocations, 4);
  EXPECT_EQ(res.counts->outstanding_bytes, 0u);
}

TEST(Api2606ResourceRef, CheckedConversionRefusesNull)
{
  counting_resource res;
  auto ref = rmm::to_device_async_resource_ref_checked(&res);
  EXPECT_EQ(cuda::mr::resource_cast<counting_resource>(&ref), &res);

  counting_resource* none = nullptr;
  try {
    (void)rmm::to_device_async_resource_ref_checked(none);
    FAIL() << "null accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("null resource pointer"), std::string::npos) << e.what();
  }
}

TEST(Api2606ResourceRef, RefsCompareByResource)
{
  counting_resource a;
  counting_resource b;
  counting_resource a_copy = a;
  EXPECT_TRUE(rmm::device_async_resource_ref{a} == rmm::device_async_resource_ref{a_copy});
  EXPECT_FALSE(rmm::device_async_resource_ref{a} == rmm::device_async_resource_ref{b});
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(Api2606Errors, InvalidArgumentAndSafeShutdownAssert)
{
  static_assert(std::is_base_of_v<std::invalid_argument, rmm::invalid_argument>);
  EXPECT_THROW(RMM_EXPECTS(false, "bad", rmm::invalid_argument), rmm::invalid_argument);
  try {
    RMM_FAIL("what went wrong", rmm::invalid_argument);
  } catch (rmm::invalid_argument const& e) {
    EXPECT_NE(std::string{e.what()}.find("what went wrong"), std::string::npos);
  }
  // Success and the runtime's "unloading" error both pass; the macro evaluates its argument
  // exactly once.
  int calls    = 0;
  auto succeed = [&calls] {
    ++calls;
    return cudaSuccess;
  };
  auto unloading = [&calls] {
    ++calls;
    return cudaErrorCudartUnloading;
  };
  RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(succeed());
  RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(unloading());
  EXPECT_EQ(calls, 2);
}

TEST(Api2606Errors, ProcessIsExiting)
{
  EXPECT_FALSE(rmm::process_is_exiting());
  rmm::detail::register_process_exit_hook();
  rmm::detail::register_process_exit_hook();  // once per process; later calls do nothing
  EXPECT_FALSE(rmm::process_is_exiting());
  static_assert(noexcept(rmm::process_is_exiting()));
  static_assert(noexcept(rmm::detail::register_process_exit_hook()));
}

// ---------------------------------------------------------------------------------------------
// Streams

TEST(Api2606Streams, StreamConvertsToStreamRef)
{
  rmm::cuda_stream stream{rmm::cuda_stream::flags::non_blocking};
  ASSERT_TRUE(stream.is_valid());
  cuda::stream_ref ref = stream;
  EXPECT_EQ(ref.get(), stream.value());
  rmm::cuda_stream_view view{ref};
  EXPECT_EQ(view.value(), stream.value());
  cuda::stream_ref back = view;
  EXPECT_EQ(back.get(), stream.value());
  static_assert(static_cast<unsigned>(rmm::cuda_stream::flags::sync_default) == cudaStreamDefault);
  static_assert(static_cast<unsigned>(rmm::cuda_stream::flags::non_blocking) ==
                cudaStreamNonBlocking);
  rmm::cuda_stream moved{std::move(stream)};
  EXPECT_TRUE(moved.is_valid());
  EXPECT_FALSE(stream.is_valid());  // NOLINT(bugprone-use-after-move): the moved-from state
  moved.synchronize();
}

TEST(Api2606Streams, ViewRefusesLiteralZeroAndNull)
{
  static_assert(!std::is_constructible_v<rmm::cuda_stream_view, int>);
  static_assert(!std::is_constructible_v<rmm::cuda_stream_view, std::nullptr_t>);
  static_assert(std::is_constructible_v<rmm::cuda_stream_view, cudaStream_t>);
  static_assert(std::is_constructible_v<rmm::cuda_stream_view, cuda::stream_ref>);
  EXPECT_TRUE(rmm::cuda_stream_view{}.is_default());
  EXPECT_TRUE(rmm::cuda_stream_default.is_default());
  EXPECT_TRUE(rmm::cuda_stream_legacy.is_default());
  EXPECT_TRUE(rmm::cuda_stream_per_thread.is_per_thread_default());
  EXPECT_EQ(rmm::cuda_stream_view{}, rmm::cuda_stream_default);
}

TEST(Api2606Streams, PoolHandsOutItsStreams)
{
  rmm::cuda_stream_pool pool{3, rmm::cuda_stream::flags::non_blocking};
  EXPECT_EQ(pool.get_pool_size(), 3u);
  auto a = pool.get_stream();
  auto b = pool.get_stream();
  auto c = pool.get_stream();
  auto d = pool.get_stream();
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(a, d);  // round robin
  EXPECT_EQ(pool.get_stream(4), pool.get_stream(1));
  EXPECT_THROW(rmm::cuda_stream_pool{0}, rmm::logic_error);
  EXPECT_EQ(rmm::cuda_stream_pool::default_size, 16u);
}

// ---------------------------------------------------------------------------------------------
// device_buffer

TEST(Api2606DeviceBuffer, ConstructsFromResourcesRefsAndUserResources)
{
  rmm::cuda_stream stream;
  counting_resource user;
  {
    rmm::device_buffer from_user{1000, stream.view(), user};  // any_resource copy of user
    EXPECT_EQ(user.counts->allocations, 1);
    EXPECT_EQ(user.counts->last_bytes, 1000u);
    EXPECT_EQ(user.counts->last_alignment, rmm::CUDA_ALLOCATION_ALIGNMENT);
    EXPECT_EQ(from_user.alignment(), rmm::CUDA_ALLOCATION_ALIGNMENT);
    rmm::device_buffer from_ref{10, stream.view(), rmm::device_async_resource_ref{user}};
    EXPECT_EQ(user.counts->allocations, 2);
    auto mr = from_user.memory_resource();
    EXPECT_EQ(cuda::mr::resource_cast<counting_resource>(&mr)->counts, user.counts);
  }
  EXPECT_EQ(user.counts->deallocations, 2);
  EXPECT_EQ(user.counts->outstanding_bytes, 0u);

  rmm::mr::cuda_memory_resource cuda_mr;
  rmm::device_buffer from_ours{256, stream.view(), cuda_mr};
  EXPECT_NE(from_ours.data(), nullptr);
  rmm::device_buffer from_current{64, stream.view()};  // the current device resource
  EXPECT_NE(from_current.data(), nullptr);
  EXPECT_EQ(from_current.memory_resource(), rmm::mr::get_current_device_resource_ref());
}

TEST(Api2606DeviceBuffer, KeepsItsResourceAlive)
{
  rmm::cuda_stream stream;
  std::weak_ptr<counting_resource::counters> watch;
  std::unique_ptr<rmm::device_buffer> buf;
  {
    counting_resource user;
    watch = user.counts;
    buf   = std::make_unique<rmm::device_buffer>(128, stream.view(), user);
  }
  EXPECT_FALSE(watch.expired());  // the buffer's any_resource holds a copy
  buf.reset();
  EXPECT_TRUE(watch.expired());
}

TEST(Api2606DeviceBuffer, AlignmentConstructors)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::device_buffer aligned{100, 4096, stream.view(), user};
  EXPECT_EQ(aligned.alignment(), 4096u);
  EXPECT_EQ(user.counts->last_alignment, 4096u);
  EXPECT_EQ(aligned.size(), 100u);

  std::vector<std::uint8_t> host(300);
  std::iota(host.begin(), host.end(), 0);
  rmm::device_buffer copied{host.data(), host.size(), 512, stream.view(), user};
  EXPECT_EQ(copied.alignment(), 512u);
  EXPECT_EQ(user.counts->last_alignment, 512u);
  std::vector<std::uint8_t> back(300);
  ASSERT_EQ(rmm_memcpy_async(back.data(), copied.data(), back.size(), stream.value()),
            RMM_STATUS_SUCCESS);
  stream.synchronize();
  EXPECT_EQ(back, host);

  // A copy keeps the source's alignment; growing keeps the buffer's.
  rmm::device_buffer copy_of{copied, stream.view(), user};
  EXPECT_EQ(copy_of.alignment(), 512u);
  copy_of.resize(5000, stream.view());
  EXPECT_EQ(user.counts->last_alignment, 512u);
  EXPECT_EQ(copy_of.alignment(), 512u);
  std::vector<std::uint8_t> back2(300);
  ASSERT_EQ(rmm_memcpy_async(back2.data(), copy_of.data(), back2.size(), stream.value()),
            RMM_STATUS_SUCCESS);
  stream.synchronize();
  EXPECT_EQ(back2, host);
}

TEST(Api2606DeviceBuffer, AlignmentNotAPowerOfTwoIsInvalidArgument)
{
  rmm::cuda_stream stream;
  counting_resource user;
  for (std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{100}, std::size_t{257}}) {
    try {
      rmm::device_buffer buf{64, bad, stream.view(), user};
      FAIL() << "alignment " << bad << " accepted";
    } catch (rmm::invalid_argument const& e) {
      EXPECT_NE(std::string{e.what()}.find("alignment " + std::to_string(bad)), std::string::npos)
        << e.what();
    }
  }
  std::uint8_t host[8]{};
  EXPECT_THROW((rmm::device_buffer{host, sizeof(host), 48, stream.view(), user}),
               rmm::invalid_argument);
  EXPECT_EQ(user.counts->allocations, 0);
}

TEST(Api2606DeviceBuffer, EmptyAnyResourceIsRefused)
{
  rmm::cuda_stream stream;
  any_device_resource empty;
  ASSERT_FALSE(empty.has_value());
  try {
    rmm::device_buffer buf{64, stream.view(), std::move(empty)};
    FAIL() << "empty resource accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("empty cuda::mr::any_resource"), std::string::npos)
      << e.what();
  }
  EXPECT_THROW((rmm::device_buffer{0, stream.view(), any_device_resource{}}), rmm::logic_error);
  EXPECT_THROW((rmm::device_uvector<int>{4, stream.view(), any_device_resource{}}),
               rmm::logic_error);
  EXPECT_THROW((rmm::device_scalar<int>{stream.view(), any_device_resource{}}), rmm::logic_error);
}

TEST(Api2606DeviceBuffer, NullSourceWithSizeIsRefused)
{
  rmm::cuda_stream stream;
  counting_resource user;
  try {
    rmm::device_buffer buf{nullptr, 16, stream.view(), user};
    FAIL() << "null source accepted";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("16 bytes from a null pointer"), std::string::npos)
      << e.what();
  }
  EXPECT_EQ(user.counts->allocations, 0);
  rmm::device_buffer nothing{nullptr, 0, stream.view(), user};  // size 0: nothing to copy
  EXPECT_EQ(nothing.data(), nullptr);
}

TEST(Api2606DeviceBuffer, MoveLeavesSourceEmptyWithoutResource)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::device_buffer src{256, 1024, stream.view(), user};
  void* const data = src.data();
  rmm::device_buffer dst{std::move(src)};
  EXPECT_EQ(dst.data(), data);
  EXPECT_EQ(dst.alignment(), 1024u);
  EXPECT_EQ(src.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(src.size(), 0u);
  EXPECT_EQ(src.capacity(), 0u);
  EXPECT_EQ(src.alignment(), 1u);
  // Growing a moved-from buffer has nothing to allocate from: a clear error, not a crash.
  try {
    src.resize(32, stream.view());
    FAIL() << "moved-from buffer allocated";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("moved from"), std::string::npos) << e.what();
  }
  // Assigning gives it memory and a resource again.
  src = rmm::device_buffer{8, stream.view(), user};
  src.resize(64, stream.view());
  EXPECT_EQ(src.size(), 64u);
  EXPECT_EQ(user.counts->deallocations, 1);  // the 8 bytes, by the resize
  dst = std::move(src);
  EXPECT_EQ(user.counts->deallocations, 2);  // dst's 256 bytes, by the assignment
  EXPECT_EQ(dst.size(), 64u);
}

TEST(Api2606DeviceBuffer, ReserveResizeShrink)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::device_buffer buf{10, stream.view(), user};
  buf.reserve(100, stream.view());
  EXPECT_EQ(buf.capacity(), 100u);
  EXPECT_EQ(buf.size(), 10u);
  buf.resize(50, stream.view());
  EXPECT_EQ(buf.capacity(), 100u);
  buf.shrink_to_fit(stream.view());
  EXPECT_EQ(buf.capacity(), 50u);
  EXPECT_EQ(buf.ssize(), 50);
  EXPECT_EQ(user.counts->allocations, 3);
  EXPECT_EQ(user.counts->deallocations, 2);
  EXPECT_EQ(buf.stream(), stream.view());
}

// ---------------------------------------------------------------------------------------------
// device_uvector, device_scalar

TEST(Api2606DeviceUvector, ElementsSpansAndReverseIterators)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::device_uvector<double> vec{5, stream.view(), user};
  EXPECT_EQ(user.counts->last_alignment, alignof(double));
  for (std::size_t i = 0; i < vec.size(); ++i) {
    vec.set_element(i, static_cast<double>(i) * 1.5, stream.view());
  }
  EXPECT_EQ(vec.element(3, stream.view()), 4.5);
  EXPECT_EQ(vec.front_element(stream.view()), 0.0);
  EXPECT_EQ(vec.back_element(stream.view()), 6.0);
  vec.set_element_to_zero_async(4, stream.view());
  EXPECT_EQ(vec.back_element(stream.view()), 0.0);

  cuda::std::span<double> span = vec;
  EXPECT_EQ(span.data(), vec.data());
  EXPECT_EQ(span.size(), 5u);
  auto const& cvec                    = vec;
  cuda::std::span<double const> cspan = cvec;
  EXPECT_EQ(cspan.data(), vec.data());

  static_assert(std::is_same_v<rmm::device_uvector<double>::reverse_iterator,
                               cuda::std::reverse_iterator<double*>>);
  EXPECT_EQ(vec.rbegin().base(), vec.end());
  EXPECT_EQ(vec.rend().base(), vec.begin());
  EXPECT_EQ(cvec.crbegin().base(), cvec.cend());
  EXPECT_EQ(std::distance(vec.rbegin(), vec.rend()), 5);

  auto mr = vec.memory_resource();
  EXPECT_EQ(cuda::mr::resource_cast<counting_resource>(&mr)->counts, user.counts);

  rmm::device_uvector<double> copy{vec, stream.view()};
  EXPECT_EQ(copy.element(3, stream.view()), 4.5);
  rmm::device_buffer released = vec.release();
  EXPECT_EQ(released.size(), 5 * sizeof(double));
  EXPECT_TRUE(vec.is_empty());  // NOLINT(bugprone-use-after-move)
}

TEST(Api2606DeviceUvector, OutOfRangeAndOverflow)
{
  rmm::cuda_stream stream;
  rmm::device_uvector<int> vec{3, stream.view()};
  int const value = 7;
  try {
    vec.set_element_async(3, value, stream.view());
    FAIL() << "index 3 accepted";
  } catch (rmm::out_of_range const& e) {
    EXPECT_NE(std::string{e.what()}.find("element 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("size 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)vec.element(99, stream.view()), rmm::out_of_range);
  EXPECT_THROW(vec.set_element_to_zero_async(3, stream.view()), rmm::out_of_range);
  rmm::device_uvector<int> empty{0, stream.view()};
  EXPECT_THROW((void)empty.front_element(stream.view()), rmm::out_of_range);
  EXPECT_THROW((void)empty.back_element(stream.view()), rmm::out_of_range);
  try {
    rmm::device_uvector<std::int64_t> huge{std::numeric_limits<std::size_t>::max() / 4,
                                           stream.view()};
    FAIL() << "overflowing size accepted";
  } catch (rmm::bad_alloc const& e) {
    EXPECT_NE(std::string{e.what()}.find("overflow"), std::string::npos) << e.what();
  }
}

TEST(Api2606DeviceScalar, ValueRoundTrip)
{
  rmm::cuda_stream stream;
  counting_resource user;
  int const init = 42;
  rmm::device_scalar<int> scalar{init, stream.view(), user};
  EXPECT_EQ(scalar.value(stream.view()), 42);
  int const next = 7;
  scalar.set_value_async(next, stream.view());
  EXPECT_EQ(scalar.value(stream.view()), 7);
  scalar.set_value_to_zero_async(stream.view());
  EXPECT_EQ(scalar.value(stream.view()), 0);
  rmm::device_scalar<int> copy{scalar, stream.view()};
  EXPECT_EQ(copy.value(stream.view()), 0);
  EXPECT_EQ(scalar.size(), 1u);
  rmm::device_scalar<int> moved{std::move(scalar)};
  EXPECT_EQ(moved.value(stream.view()), 0);
  EXPECT_THROW((void)scalar.value(stream.view()),
               rmm::out_of_range);  // NOLINT(bugprone-use-after-move)
}

// ---------------------------------------------------------------------------------------------
// prefetch, allocators, Thrust

TEST(Api2606Prefetch, SpanAndPointerForms)
{
  rmm::cuda_stream stream;
  rmm::device_uvector<int> vec{16, stream.view()};
  auto const device = rmm::get_current_cuda_device();
  EXPECT_NO_THROW(rmm::prefetch(vec.data(), vec.size() * sizeof(int), device, stream.view()));
  EXPECT_NO_THROW(rmm::prefetch<int>(vec, device, stream.view()));
  EXPECT_NO_THROW(rmm::prefetch<int>({vec.data(), vec.size()}, device, stream.view()));
  rmm::device_scalar<int> scalar{stream.view()};
  EXPECT_NO_THROW(rmm::prefetch<int>({scalar.data(), scalar.size()}, device, stream.view()));
}

TEST(Api2606Allocators, PolymorphicAllocatorOwnsItsResource)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::mr::polymorphic_allocator<int> alloc{user};
  int* p = alloc.allocate(100, stream.view());
  EXPECT_EQ(user.counts->last_bytes, 100 * sizeof(int));
  EXPECT_EQ(user.counts->last_alignment, rmm::CUDA_ALLOCATION_ALIGNMENT);
  alloc.deallocate(p, 100, stream.view());
  EXPECT_EQ(user.counts->outstanding_bytes, 0u);

  rmm::mr::polymorphic_allocator<double> rebound{alloc};
  EXPECT_TRUE(alloc == rebound);
  rmm::mr::polymorphic_allocator<int> other{counting_resource{}};
  EXPECT_TRUE(alloc != other);
  rmm::mr::polymorphic_allocator<int> current;
  EXPECT_EQ(current.get_upstream_resource(), rmm::mr::get_current_device_resource_ref());

  EXPECT_THROW(rmm::mr::polymorphic_allocator<int>{any_device_resource{}}, rmm::logic_error);
  EXPECT_THROW((void)alloc.allocate(std::numeric_limits<std::size_t>::max() / 2, stream.view()),
               rmm::bad_alloc);
}

TEST(Api2606Allocators, StreamAllocatorAdaptor)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::mr::polymorphic_allocator<int> alloc{user};
  auto adapted = rmm::mr::stream_allocator_adaptor{alloc, stream.view()};
  EXPECT_EQ(adapted.stream(), stream.view());
  int* p = adapted.allocate(10);
  EXPECT_EQ(user.counts->allocations, 1);
  adapted.deallocate(p, 10);
  EXPECT_EQ(user.counts->deallocations, 1);
  using rebound_t = decltype(adapted)::rebind<double>::other;
  rebound_t rebound{adapted};
  EXPECT_TRUE(rebound == adapted);
  EXPECT_EQ(rebound.stream(), stream.view());
  static_assert(!std::is_default_constructible_v<decltype(adapted)>);
}

TEST(Api2606Thrust, AllocatorDeviceVectorExecPolicy)
{
  rmm::cuda_stream stream;
  counting_resource user;
  rmm::mr::thrust_allocator<int> alloc{stream.view(), user};
  EXPECT_EQ(alloc.stream(), stream.view());
  auto upstream = alloc.get_upstream_resource();
  EXPECT_EQ(cuda::mr::resource_cast<counting_resource>(&upstream)->counts, user.counts);
  {
    rmm::device_vector<int> vec(100, 0, alloc);
    EXPECT_EQ(user.counts->allocations, 1);
    thrust::fill(rmm::exec_policy(stream.view(), user), vec.begin(), vec.end(), 3);
    EXPECT_EQ(thrust::reduce(rmm::exec_policy_nosync(stream.view()), vec.begin(), vec.end()), 300);
  }
  EXPECT_EQ(user.counts->outstanding_bytes, 0u);
  rmm::mr::thrust_allocator<double> rebound{alloc};
  EXPECT_EQ(rebound.stream(), stream.view());
  EXPECT_THROW((rmm::mr::thrust_allocator<int>{stream.view(), any_device_resource{}}),
               rmm::logic_error);
}

TEST(Api2606DeviceBuffer, KeepsTheCurrentResourceAfterItIsReplaced)
{
  rmm::cuda_stream stream;
  counting_resource user;
  auto previous = rmm::mr::set_current_device_resource(user);
  rmm::device_buffer buf{100, stream.view()};  // defaults to the current resource: user
  rmm::device_uvector<int> vec{10, stream.view()};
  EXPECT_EQ(user.counts->allocations, 2);
  rmm::mr::set_current_device_resource(std::move(previous));
  buf.resize(1000, stream.view());  // still the resource the buffer was made with
  EXPECT_EQ(user.counts->allocations, 3);
  EXPECT_EQ(user.counts->last_bytes, 1000u);
  auto mr = vec.memory_resource();
  EXPECT_NE(cuda::mr::resource_cast<counting_resource>(&mr), nullptr);
}

TEST(Api2606Logger, RapidsLoggerTypes)
{
  rapids_logger::logger& logger = rmm::default_logger();
  rapids_logger::sink_ptr sink  = rmm::default_sink();
  EXPECT_NE(sink, nullptr);
  EXPECT_FALSE(rmm::default_pattern().empty());
  auto const before = logger.level();
  logger.set_level(rapids_logger::level_enum::warn);
  EXPECT_EQ(rmm::default_logger().level(), rapids_logger::level_enum::warn);
  logger.set_level(before);
  static_assert(std::is_same_v<rmm::device_vector<int>,
                               thrust::device_vector<int, rmm::mr::thrust_allocator<int>>>);
}

TEST(Api2606Aligned, Helpers)
{
  static_assert(rmm::CUDA_ALLOCATION_ALIGNMENT == 256);
  EXPECT_TRUE(rmm::is_pow2(64));
  EXPECT_FALSE(rmm::is_pow2(48));
  EXPECT_TRUE(rmm::is_supported_alignment(4096));
  EXPECT_FALSE(rmm::is_supported_alignment(0));
  EXPECT_EQ(rmm::align_up(300, 256), 512u);
  EXPECT_EQ(rmm::align_down(300, 256), 256u);
  EXPECT_TRUE(rmm::is_aligned(512, 256));
  // Host helpers: the alignment holds, and freeing null is a no-op that calls nothing.
  int frees = 0;
  void* p =
    rmm::detail::aligned_host_allocate(100, 512, [](std::size_t n) { return ::operator new(n); });
  EXPECT_TRUE(rmm::is_pointer_aligned(p, 512));
  rmm::detail::aligned_host_deallocate(p, 100, 512, [&frees](void* q) {
    ++frees;
    ::operator delete(q);
  });
  rmm::detail::aligned_host_deallocate(nullptr, 100, 512, [&frees](void*) { ++frees; });
  EXPECT_EQ(frees, 1);
  alignas(256) static char block[512];
  EXPECT_TRUE(rmm::is_pointer_aligned(block));
  EXPECT_FALSE(rmm::is_pointer_aligned(block + 1));
}

}  // namespace
