// RMM 26.10's names (RMM_API_VERSION=2610, C++20, CCCL >= 3.5) on the host runtime: every API
// takes and returns cuda::stream_ref; cuda_stream_view is deprecated but keeps working and
// compares with cuda::stream_ref; the default-stream constants are cuda::stream_ref; the new
// detail::memcpy_async and detail::is_default_stream; the ABI namespace macros.
// Built with -Werror: a deprecation warning from the package's own headers fails the build.
#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/cuda_memcpy.hpp>
#include <rmm/detail/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/logger_macros.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/prefetch.hpp>

#include <cuda/memory_resource>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#if RMM_API_GENERATION != 2610
#error "api_26_10_tests.cpp must be compiled with RMM_API_VERSION=2610"
#endif

// Code written for RMM 26.08 and later opens RMM's namespace with its macros.
RMM_NAMESPACE_BEGIN
namespace test_extension {
inline int answer() { return 42; }
}  // namespace test_extension
RMM_NAMESPACE_END

namespace {

using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

cuda::stream_ref default_stream() { return cuda::stream_ref{cudaStream_t{nullptr}}; }

TEST(Api2610Streams, ContainersTakeAndReturnStreamRef)
{
  rmm::cuda_stream owned;
  cuda::stream_ref const stream = owned;

  rmm::device_buffer buf(64, stream);
  static_assert(std::is_same_v<decltype(buf.stream()), cuda::stream_ref>);
  EXPECT_EQ(buf.stream(), stream);
  buf.resize(128, stream);
  buf.set_stream(default_stream());
  EXPECT_EQ(buf.stream(), default_stream());

  rmm::device_uvector<int> vec(16, stream);
  static_assert(std::is_same_v<decltype(vec.stream()), cuda::stream_ref>);
  vec.set_element(3, 7, stream);
  EXPECT_EQ(vec.element(3, stream), 7);
  vec.reserve(64, stream);
  vec.shrink_to_fit(stream);

  rmm::device_scalar<int> scalar(stream);
  static_assert(std::is_same_v<decltype(scalar.stream()), cuda::stream_ref>);
  int const value = 11;
  scalar.set_value_async(value, stream);
  EXPECT_EQ(scalar.value(stream), 11);
}

TEST(Api2610Streams, TemporariesAreRefused)
{
  // RMM 26.10 deletes the rvalue forms of both (const ones included).
  static_assert(std::is_constructible_v<rmm::device_scalar<int>, int const&, cuda::stream_ref>);
  static_assert(!std::is_constructible_v<rmm::device_scalar<int>, int, cuda::stream_ref>);
  static_assert(!std::is_constructible_v<rmm::device_scalar<int>, int const, cuda::stream_ref>);
  static_assert(!std::is_constructible_v<rmm::device_scalar<int>,
                                         int const,
                                         cuda::stream_ref,
                                         any_device_resource>);
  static_assert([]<typename Scalar>(Scalar*) {
    return requires(Scalar & s, int const v, cuda::stream_ref st) { s.set_value_async(v, st); }
    &&!requires(Scalar & s, int v, cuda::stream_ref st) { s.set_value_async(std::move(v), st); }
    &&!requires(Scalar & s, int const v, cuda::stream_ref st)
    {
      s.set_value_async(std::move(v), st);
    };
  }(static_cast<rmm::device_scalar<int>*>(nullptr)));
}

TEST(Api2610Streams, DeprecatedViewStillWorks)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  rmm::cuda_stream owned;
  rmm::cuda_stream_view const view = owned.view();
  cuda::stream_ref const ref       = owned;
  EXPECT_EQ(view.get(), ref.get());
  EXPECT_TRUE(view == ref);
  EXPECT_TRUE(ref == view);
  EXPECT_FALSE(view != ref);
  EXPECT_TRUE(view != default_stream());
  view.sync();
  // A view converts to the stream_ref the APIs take.
  rmm::device_buffer buf(8, view);
  EXPECT_EQ(buf.stream(), ref);
  static_assert(
    std::is_same_v<std::remove_cv_t<decltype(rmm::cuda_stream_default)>, cuda::stream_ref>);
  static_assert(
    std::is_same_v<std::remove_cv_t<decltype(rmm::cuda_stream_per_thread)>, cuda::stream_ref>);
  EXPECT_EQ(rmm::cuda_stream_default.get(), cudaStream_t{nullptr});
  EXPECT_EQ(rmm::cuda_stream_legacy.get(), cudaStreamLegacy);
  EXPECT_EQ(rmm::cuda_stream_per_thread.get(), cudaStreamPerThread);
  static_assert(!std::is_constructible_v<rmm::cuda_stream_view, int>);
#pragma GCC diagnostic pop
}

TEST(Api2610Streams, PoolPrefetchPolicyAllocatorsTakeStreamRef)
{
  rmm::cuda_stream_pool pool{2};
  static_assert(std::is_same_v<decltype(pool.get_stream()), cuda::stream_ref>);
  static_assert(std::is_same_v<decltype(pool.get_stream(1)), cuda::stream_ref>);
  cuda::stream_ref const stream = pool.get_stream(1);
  EXPECT_EQ(stream, pool.get_stream(3));

  rmm::device_uvector<int> vec(4, stream);
  rmm::prefetch(vec.data(), vec.size() * sizeof(int), rmm::get_current_cuda_device(), stream);
  rmm::prefetch(
    cuda::std::span<int const>{vec.data(), vec.size()}, rmm::get_current_cuda_device(), stream);

  rmm::mr::polymorphic_allocator<int> alloc;
  int* p = alloc.allocate(4, stream);
  alloc.deallocate(p, 4, stream);
  rmm::mr::stream_allocator_adaptor adapted{alloc, stream};
  static_assert(std::is_same_v<decltype(adapted.stream()), cuda::stream_ref>);
  EXPECT_EQ(adapted.stream(), stream);

  rmm::mr::thrust_allocator<int> thrust_alloc(stream);
  static_assert(std::is_same_v<decltype(thrust_alloc.stream()), cuda::stream_ref>);
  EXPECT_EQ(thrust_alloc.stream(), stream);
}

TEST(Api2610Streams, CallbackTypesTakeStreamRef)
{
  static_assert(std::is_same_v<rmm::mr::allocate_callback_t,
                               std::function<void*(std::size_t, cuda::stream_ref, void*)>>);
  static_assert(std::is_same_v<rmm::mr::deallocate_callback_t,
                               std::function<void(void*, std::size_t, cuda::stream_ref, void*)>>);
  rmm::mr::cuda_memory_resource upstream;
  std::vector<cudaStream_t> seen;
  rmm::mr::callback_memory_resource mr{
    [](std::size_t bytes, cuda::stream_ref stream, void* arg) {
      auto& log = *static_cast<std::vector<cudaStream_t>*>(arg);
      log.push_back(stream.get());
      return rmm::mr::cuda_memory_resource{}.allocate(stream, bytes);
    },
    [](void* ptr, std::size_t bytes, cuda::stream_ref stream, void* arg) {
      auto& log = *static_cast<std::vector<cudaStream_t>*>(arg);
      log.push_back(stream.get());
      rmm::mr::cuda_memory_resource{}.deallocate(stream, ptr, bytes);
    },
    &seen,
    &seen};
  rmm::cuda_stream owned;
  cuda::stream_ref const stream = owned;
  void* p                       = mr.allocate(stream, 256, rmm::CUDA_ALLOCATION_ALIGNMENT);
  mr.deallocate(stream, p, 256, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0], stream.get());
  EXPECT_EQ(seen[1], stream.get());
}

TEST(Api2610Detail, MemcpyAsyncAndDefaultStream)
{
  rmm::cuda_stream owned;
  cuda::stream_ref const stream = owned;
  rmm::device_buffer buf(4 * sizeof(std::int32_t), stream);
  std::vector<std::int32_t> in{1, 2, 3, 4};
  std::vector<std::int32_t> out(4, 0);
  ASSERT_EQ(rmm::detail::memcpy_async(buf.data(), in.data(), buf.size(), stream), cudaSuccess);
  ASSERT_EQ(rmm::detail::memcpy_async(out.data(), buf.data(), buf.size(), stream), cudaSuccess);
  owned.synchronize();
  EXPECT_EQ(out, in);
  // A refused copy reports an error instead of throwing.
  EXPECT_NE(rmm::detail::memcpy_async(nullptr, in.data(), 4, stream), cudaSuccess);

  EXPECT_TRUE(rmm::detail::is_default_stream(default_stream()));
  EXPECT_TRUE(rmm::detail::is_default_stream(cuda::stream_ref{cudaStreamLegacy}));
  EXPECT_FALSE(rmm::detail::is_default_stream(stream));
}

TEST(Api2610Namespace, AbiMacrosOpenTheGenerationsNamespace)
{
  EXPECT_EQ(rmm::test_extension::answer(), 42);
  EXPECT_EQ(RMM_NAMESPACE::test_extension::answer(), 42);
  EXPECT_EQ(RMM_VERSION_MAJOR, 26);
  EXPECT_EQ(RMM_VERSION_MINOR, 10);
  // The ABI namespace is the generation's own inline namespace.
  static_assert(std::is_same_v<rmm::api_26_10::device_buffer, rmm::device_buffer>);
}

TEST(Api2610Behaviour, ExecPolicyDefaultsToTheDefaultStream)
{
  rmm::exec_policy policy;
  rmm::exec_policy_nosync nosync{default_stream()};
  SUCCEED();
}

}  // namespace
